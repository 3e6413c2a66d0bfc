// tests/core/gradcheck_test.cpp
#include "test_util.h"
