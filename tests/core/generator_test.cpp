// tests/core/generator_test.cpp
#include "test_util.h"
