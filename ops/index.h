// ops/index.h
#pragma once

#include "core/autograd.h"
