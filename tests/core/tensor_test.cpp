// tests/core/tensor_test.cpp
#include "test_util.h"
