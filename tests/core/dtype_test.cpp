// tests/core/dtype_test.cpp
#include "test_util.h"
