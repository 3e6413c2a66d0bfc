// ops/unary.h
#pragma once

#include "core/autograd.h"
