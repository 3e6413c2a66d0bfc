// ops/rms_norm.h — RMSNorm and the fused residual-add + RMSNorm of a pre-norm Transformer.
//
// Shape legend: B = batch, T = time, C = channels; `...` = any leading dims (B, T, ...).
//
//   x (..., C), weight (C)  ->  rms_norm(x, weight)           (..., C)
//   x, residual (..., C)    ->  add_rms_norm(...).residual     (..., C)   x + residual
//                               add_rms_norm(...).out          (..., C)   rms_norm of that
//
// Each row of C values is divided by its root mean square and scaled per channel:
//   y_c = x_c / sqrt(mean(x^2) + eps) * w_c        (no mean subtraction, no bias)
// float16/bfloat16 inputs are computed in float32 and rounded once to their dtype.
#pragma once

#include "core/autograd.h"

namespace tg {

/// y = x / sqrt(mean(x^2 over the last dim) + eps) * weight, as torch.nn.functional.rms_norm
/// with normalized_shape = (C,). x (..., C) and weight (C) share a floating dtype; eps > 0.
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-5,
                Here here = Here::current());

/// The two outputs of add_rms_norm.
struct AddRmsNormOutput {
  Tensor out;       ///< rms_norm(residual, weight, eps)
  Tensor residual;  ///< x + residual: the new residual stream, to be carried to the next block
};

/// The fused add-norm of inference engines: residual_new = x + residual (rounded to the
/// inputs' dtype), out = rms_norm(residual_new, weight, eps). x and residual have the same
/// shape (..., C); gradients reaching either output flow into both x and residual.
AddRmsNormOutput add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                              double eps = 1e-5, Here here = Here::current());

}  // namespace tg
