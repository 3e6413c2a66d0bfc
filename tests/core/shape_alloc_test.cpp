// tests/core/shape_alloc_test.cpp
#include "test_util.h"
