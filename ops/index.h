// ops/index.h — picking elements by index, and choosing elements by a boolean mask.
//
// Shapes, with d = dim:
//   index_select(x (.., n, ..), d, index (m))  -> (.., m, ..)   out[.., k, ..] = x[.., index[k],
//   ..] gather(x, d, index), index of x's rank     -> index's shape; for d = 1 and rank 2:
//                                                  out[i][j] = x[i][index[i][j]]
//   where(cond, a, b), all three broadcast     -> the broadcast shape; out = cond ? a : b
//   masked_fill(x, mask, value)                -> x's shape; out = mask ? value : x, with the
//                                                  mask broadcast to x's shape
//
// Ids are int64 and must lie in [0, n): negative ids are an error here (as in PyTorch's
// index_select and gather), and every id is checked before anything is read.
#pragma once

#include "core/autograd.h"

namespace tg {

/// Rows (or slabs along `dim`) of x in the order of `index`, an int64 tensor with one dim
/// (or 0-d, meaning one id). Like torch.index_select.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index, Here here = Here::current());

/// Along `dim`, x's element at position index[...] of every position of `index`, which has
/// x's rank and, outside `dim`, sizes no larger than x's. Like torch.gather.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, Here here = Here::current());

/// Elementwise `cond ? a : b`, with cond a bool tensor and a, b of one dtype, all three
/// broadcast together. Like torch.where.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Here here = Here::current());

/// x with `value` wherever the bool `mask` (broadcast to x's shape) is true. Like
/// torch.masked_fill; the value is converted to x's dtype.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, Here here = Here::current());

}  // namespace tg
