// ops/join.h
#pragma once

#include "core/autograd.h"
