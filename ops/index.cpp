// ops/index.cpp
#include "ops/index.h"
