// tests/core/shape_test.cpp
#include "test_util.h"
