// tests/core/view_test.cpp
#include "test_util.h"
