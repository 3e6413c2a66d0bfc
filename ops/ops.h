// ops/ops.h — every differentiable op in tapegrad's ops layer, in one include.
#pragma once

#include "ops/activation.h"
#include "ops/arithmetic.h"
#include "ops/index.h"
#include "ops/join.h"
#include "ops/linear.h"
#include "ops/matmul.h"
#include "ops/mse_loss.h"
#include "ops/reduce.h"
#include "ops/rms_norm.h"
#include "ops/swiglu.h"
#include "ops/unary.h"
