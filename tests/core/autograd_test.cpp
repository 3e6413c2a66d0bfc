// tests/core/autograd_test.cpp
#include "test_util.h"
