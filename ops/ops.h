// ops/ops.h — every differentiable op in tapegrad's ops layer, in one include.
#pragma once

#include "ops/arithmetic.h"
#include "ops/index.h"
#include "ops/join.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/unary.h"
