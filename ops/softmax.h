// ops/softmax.h — softmax and log_softmax along any dim, numerically stable, fused backward.
//
// Shape legend: B = batch, T = time, C = channels, V = vocab; H = heads. Any rank, any dim:
//
//   x (..., n, ...)  ->  softmax(x, dim)      same shape; every slice along `dim` sums to 1
//   x (..., n, ...)  ->  log_softmax(x, dim)  same shape; log of the above, computed directly
//
// Where they sit in a Transformer: softmax over the keys turns attention scores (B, H, T, T)
// into weights, and log_softmax over the vocabulary (B, T, V) is the first half of the LM
// head's cross-entropy loss (ops/cross_entropy.h fuses the two).
//
// Along `dim`, with m = max_k x_k (subtracted so that exp never overflows):
//   softmax_i     = exp(x_i - m) / sum_k exp(x_k - m)
//   log_softmax_i = x_i - m - log(sum_k exp(x_k - m))
// float16/bfloat16 inputs are computed in float32 and rounded once to their dtype.
#pragma once

#include "core/autograd.h"

namespace tg {

/// exp(x) / sum(exp(x)) along `dim` (negative counts from the end), as torch.softmax. A 0-d
/// x is one slice of one element (dim 0 or -1) and gives 1. x must be floating point.
/// Backward: dx = y * (dy - sum(dy * y)) along dim, from the saved output y.
Tensor softmax(const Tensor& x, int64_t dim, Here here = Here::current());

/// log(softmax(x, dim)) computed as x - max - log(sum(exp(x - max))), so that it stays
/// finite where softmax underflows to 0, as torch.log_softmax. A 0-d x gives 0.
/// Backward: dx = dy - exp(y) * sum(dy) along dim, from the saved output y.
Tensor log_softmax(const Tensor& x, int64_t dim, Here here = Here::current());

}  // namespace tg
