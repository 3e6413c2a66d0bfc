// tests/ops/reference_test.cpp
#include "test_util.h"
