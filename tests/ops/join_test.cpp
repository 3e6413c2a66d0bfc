// tests/ops/join_test.cpp
#include "test_util.h"
