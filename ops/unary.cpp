// ops/unary.cpp
#include "ops/unary.h"
