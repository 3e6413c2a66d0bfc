// ops/matmul.h
#pragma once

#include "core/autograd.h"
