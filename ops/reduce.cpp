// ops/reduce.cpp
#include "ops/reduce.h"
