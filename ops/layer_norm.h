// ops/layer_norm.h — LayerNorm over the last dim, with optional per-channel weight and bias.
//
// Shape legend: B = batch, T = time, C = channels; `...` = any leading dims (B, T, ...).
//
//   x (..., C), weight (C), bias (C)  ->  layer_norm(x, weight, bias)   (..., C)
//
// Each row of C values is centred on its mean, divided by its standard deviation and then
// scaled and shifted per channel, as torch.nn.functional.layer_norm with normalized_shape (C,):
//   mean = sum_c x_c / C,  var = sum_c (x_c - mean)^2 / C   (biased, as PyTorch)
//   y_c  = (x_c - mean) / sqrt(var + eps) * w_c + b_c
// weight and bias are each optional (an undefined Tensor() means w = 1, resp. b = 0).
// float16/bfloat16 inputs are computed in float32 and rounded once to their dtype.
#pragma once

#include "core/autograd.h"

namespace tg {

/// y = (x - mean) / sqrt(var + eps) * weight + bias over the last dim of x (..., C), with the
/// biased variance. weight and bias are [C] or undefined (absent); all tensors share one
/// floating dtype; eps > 0. With C = 1 every row is its own mean, so y = bias (or 0).
Tensor layer_norm(const Tensor& x, const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                  double eps = 1e-5, Here here = Here::current());

}  // namespace tg
