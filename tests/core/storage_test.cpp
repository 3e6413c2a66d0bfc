// tests/core/storage_test.cpp
#include "test_util.h"
