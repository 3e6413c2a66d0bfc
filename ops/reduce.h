// ops/reduce.h
#pragma once

#include "core/autograd.h"
