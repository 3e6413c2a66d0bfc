// tests/core/safetensors_test.cpp
#include "test_util.h"
