// tests/core/random_test.cpp
#include "test_util.h"
