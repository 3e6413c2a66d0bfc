// tests/core/broadcast_test.cpp
#include "test_util.h"
