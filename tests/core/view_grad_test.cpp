// tests/core/view_grad_test.cpp
#include "test_util.h"
