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

}  // namespace tg::kernels
