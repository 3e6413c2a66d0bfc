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

namespace tg {

/// y = x @ weight^T + bias over the last dim of x (like torch.nn.functional.linear).
/// A fused op: one kernel forward, one backward (dx = dy W, dW = dy^T x, db = sum dy).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Here here = Here::current());

}  // namespace tg
