// tests/core/factories_test.cpp
#include "test_util.h"
