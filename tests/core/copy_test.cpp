// tests/core/copy_test.cpp
#include "test_util.h"
