// ops/unary.h — pow, exp, log, sqrt, rsqrt, abs, clamp: elementwise functions of one tensor.
//
// Shapes: out has the shape of x (any shape, any strides; out is contiguous).
// Dtypes: floating only; out has x's dtype, computed in double for float64 and in float
// for float32/float16/bfloat16.
//
// Where a function has a kink or a singularity, the backward makes the same choice as
// PyTorch (pinned by tests/ops/unary_test.cpp):
//   abs'(0) = 0 (the sign of 0 is 0)
//   clamp passes the gradient where min <= x <= max, bounds included; 0 elsewhere
//   pow(x, p)' = p * x^(p-1) as IEEE computes it: at x = 0 that is +inf for 0 < p < 1,
//     -inf for p < 0, 1 for p = 1, 0 for p > 1; and exactly 0 everywhere for p = 0
//   sqrt'(0) = +inf, rsqrt'(0) = -inf, log'(0) = +inf (times the upstream gradient)
#pragma once

#include <optional>

#include "core/autograd.h"

namespace tg {

/// x^exponent, elementwise (a negative x with a non-integer exponent gives nan).
Tensor pow(const Tensor& x, double exponent, Here here = Here::current());
/// e^x.
Tensor exp(const Tensor& x, Here here = Here::current());
/// Natural logarithm (log(0) = -inf, log of a negative number = nan).
Tensor log(const Tensor& x, Here here = Here::current());
/// Square root (nan for negative x).
Tensor sqrt(const Tensor& x, Here here = Here::current());
/// 1 / sqrt(x).
Tensor rsqrt(const Tensor& x, Here here = Here::current());
/// |x|.
Tensor abs(const Tensor& x, Here here = Here::current());
/// min(max(x, min), max): each bound is optional, but at least one must be given, and
/// min <= max. Bounds are rounded to x's dtype first (as PyTorch does). nan stays nan.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max,
             Here here = Here::current());

}  // namespace tg
