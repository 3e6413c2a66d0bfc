// ops/rms_norm.h — RMSNorm and the fused residual-add + RMSNorm of a pre-norm Transformer.
//
// Shape legend: B = batch, T = time, C = channels; `...` = any leading dims (B, T, ...).
//
//   x (..., C), weight (C)     ->  rms_norm(x, weight)              (..., C)
//   residual, branch (..., C)  ->  add_rms_norm(...).residual       (..., C)  residual + branch
//                                  add_rms_norm(...).out            (..., C)  rms_norm of that
//
// Each row of C values is divided by its root mean square and scaled per channel:
//   y_c = x_c / sqrt(mean(x^2) + eps) * w_c        (no mean subtraction, no bias)
// float16/bfloat16 inputs are computed in float32 and rounded once to their dtype.
#pragma once

#include "core/autograd.h"
#include "ops/kernels.h"

namespace tg {

/// y = x / sqrt(mean(x^2 over the last dim) + eps) * weight, as torch.nn.functional.rms_norm
/// with normalized_shape = (C,). x (..., C) and weight (C) share a floating dtype; eps > 0.
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-5,
                Here here = Here::current());

/// The two outputs of add_rms_norm.
struct AddRmsNormOutput {
  Tensor out;       ///< rms_norm(residual, weight, eps) of the new residual stream
  Tensor residual;  ///< residual + branch: the new residual stream, carried to the next block
};

/// The fused add-norm of a pre-norm Transformer (and of inference engines): the residual
/// stream takes the branch's output, residual_new = residual + branch (rounded to the
/// inputs' dtype), and is normalised for the next branch: out = rms_norm(residual_new,
/// weight, eps). residual and branch have the same shape (..., C); gradients reaching either
/// output flow into both. nn::RMSNorm::add_forward is the module's way to call it.
AddRmsNormOutput add_rms_norm(const Tensor& residual, const Tensor& branch, const Tensor& weight,
                              double eps = 1e-5, Here here = Here::current());

}  // namespace tg

// ---------------------------------------------------------------- the kernels
// Reference (ops/rms_norm.cpp) and fast (ops/fast/rms_norm.cpp), chosen by ops/kernels.h.
// `rows` rows of `cols` channels, contiguous, in the compute type F; rstd is one number per
// row, the s = (mean(x^2) + eps)^(-1/2) the forward computed. The write rule of
// ops/kernels.h.
namespace tg::kernels {

/// y = x * s * w per row, and rstd = s.
template <class F>
using RmsNormForward = void(const F* x, const F* w, F* y, F* rstd, int64_t rows, int64_t cols,
                            F eps);
/// dx and dw from dout; a null GradOut skips that gradient.
template <class F>
using RmsNormBackward = void(const F* dout, const F* x, const F* w, const F* rstd, GradOut<F> dx,
                             GradOut<F> dw, int64_t rows, int64_t cols);
/// h = residual + branch, then rms_norm's forward of h.
template <class F>
using AddRmsNormForward = void(const F* residual, const F* branch, const F* w, F* h, F* y, F* rstd,
                               int64_t rows, int64_t cols, F eps);
/// dh = rms_norm's dx of h + dh_out (the gradient of the residual output), and dw.
template <class F>
using AddRmsNormBackward = void(const F* dout, const F* dh_out, const F* h, const F* w,
                                const F* rstd, GradOut<F> dh, GradOut<F> dw, int64_t rows,
                                int64_t cols);

extern KernelPair<RmsNormForward, float, double> rms_norm_forward;
extern KernelPair<RmsNormBackward, float, double> rms_norm_backward;
extern KernelPair<AddRmsNormForward, float, double> add_rms_norm_forward;
extern KernelPair<AddRmsNormBackward, float, double> add_rms_norm_backward;

}  // namespace tg::kernels
