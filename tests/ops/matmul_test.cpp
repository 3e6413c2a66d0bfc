// tests/ops/matmul_test.cpp
#include "test_util.h"
