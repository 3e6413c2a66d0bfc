// ops/matmul.cpp
#include "ops/matmul.h"
