// tests/ops/unary_test.cpp
#include "test_util.h"
