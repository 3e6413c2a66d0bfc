// tests/ops/arithmetic_test.cpp
#include "test_util.h"
