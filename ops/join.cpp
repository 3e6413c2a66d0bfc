// ops/join.cpp
#include "ops/join.h"
