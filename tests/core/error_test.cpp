// tests/core/error_test.cpp
#include "test_util.h"
