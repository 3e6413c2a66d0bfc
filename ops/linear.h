// ops/linear.h — the fully connected layer y = x W^T + b, with its own backward.
//
// B = batch, T = time, C = channels (in), O = out features; `...` = any leading dims.
//
//   x       (..., in)     e.g. activations (B, T, C)
//   weight  (out, in)     PyTorch's layout: one row per output feature
//   bias    (out)         optional: pass Tensor() for none
//   y       (..., out)
//
// Dtypes: float32 and float64; float16 and bfloat16 are computed in float32 and the result
// rounded once to the input dtype. All tensors must share one dtype.
#pragma once

#include "core/autograd.h"
#include "core/half.h"
#include "ops/kernels.h"

namespace tg {

/// y = x @ weight^T + bias over the last dim of x (like torch.nn.functional.linear).
/// A fused op: one kernel forward, one backward (dx = dy W, dW = dy^T x, db = sum dy).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Here here = Here::current());

}  // namespace tg

// ---------------------------------------------------------------- the kernels
// Reference (ops/linear.cpp) and fast (ops/fast/linear.cpp, on the blocked GEMM), chosen by
// ops/kernels.h. x (N, I), W (O, I), b (O), y and dy (N, O), all contiguous in the compute
// type F; b may be null. The write rule of ops/kernels.h.
namespace tg::kernels {

template <class F>
using LinearForward = void(const F* x, const F* w, const F* b, F* y, int64_t rows, int64_t in,
                           int64_t out);
/// dx (N, I), dW (O, I) and db (O); a null GradOut skips that gradient.
template <class F>
using LinearBackward = void(const F* dy, const F* x, const F* w, GradOut<F> dx, GradOut<F> dw,
                            GradOut<F> db, int64_t rows, int64_t in, int64_t out);

extern KernelPair<LinearForward, float, double> linear_forward;
extern KernelPair<LinearBackward, float, double> linear_backward;

// bfloat16 x and W (autocast's products, core/autocast.h) multiplied as they are, summed in
// float32: dW and db come out float32 and the op rounds them once; y and dx are rounded to
// bfloat16 by the kernel itself, as each tile of sums is done (ops/fast/gemm.h; dx is
// written, never added into, and may be null). There is no
// reference version (get() is null on the reference path): the reference story of a
// bfloat16 linear is the float one above, run on inputs widened to float32, which computes
// the same sums of the same exact products, only in another order.
using LinearForwardBF16 = void(const BFloat16* x, const BFloat16* w, const float* b, BFloat16* y,
                               int64_t rows, int64_t in, int64_t out);
using LinearBackwardBF16 = void(const BFloat16* dy, const BFloat16* x, const BFloat16* w,
                                BFloat16* dx, GradOut<float> dw, GradOut<float> db, int64_t rows,
                                int64_t in, int64_t out);
extern Kernel<LinearForwardBF16> linear_forward_bf16;
extern Kernel<LinearBackwardBF16> linear_backward_bf16;

}  // namespace tg::kernels
