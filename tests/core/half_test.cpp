// tests/core/half_test.cpp
#include "test_util.h"
