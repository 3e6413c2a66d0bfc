// core/safetensors.cpp
#include "core/safetensors.h"
