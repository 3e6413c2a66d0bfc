// tests/ops/index_test.cpp
#include "test_util.h"
