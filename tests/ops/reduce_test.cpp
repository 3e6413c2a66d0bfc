// tests/ops/reduce_test.cpp
#include "test_util.h"
