// tests/core/format_test.cpp
#include "test_util.h"
