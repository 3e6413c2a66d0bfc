// ops/join.h — cat, stack, split, chunk: joining tensors along a dim and cutting them apart.
//
// Shapes, with d = dim and "..." the dims that must agree:
//   cat([(.., n_0, ..), (.., n_1, ..), ...], d)  -> (.., n_0 + n_1 + ..., ..)
//   stack([s, s, ..., s] (k tensors), d)        -> s with a new dim of size k inserted at d
//   split(x (.., n, ..), size, d)               -> ceil(n / size) pieces along d, the last smaller
//   split(x, {n_0, n_1, ...}, d)                -> pieces of n_0, n_1, ... (they must sum to n)
//   chunk(x (.., n, ..), chunks, d)             -> pieces of ceil(n / chunks), maybe fewer pieces
//
// The pieces returned by split and chunk are views of x (as in PyTorch): no data is copied,
// and writing into a piece writes into x.
#pragma once

#include <initializer_list>
#include <vector>

#include "core/autograd.h"

namespace tg {

/// Concatenates tensors of one dtype whose shapes agree except along `dim`, like torch.cat.
/// Unlike PyTorch, a 1-D tensor of size 0 is not skipped: every input must have the
/// rank of the first.
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0, Here here = Here::current());

/// Joins tensors of one shape and dtype along a new dim, which may be in [-rank-1, rank].
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0, Here here = Here::current());

/// Pieces of `split_size` along `dim` (the last one holds what is left).
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0,
                          Here here = Here::current());

/// Pieces of the given sizes along `dim`; the sizes must sum to x.size(dim).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0,
                          Here here = Here::current());

/// `split(x, {3})` means sizes {3}, as in PyTorch, not a split_size of 3 (without this
/// overload C++ would pick the int64_t one for a one-element brace list).
inline std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> sizes,
                                 int64_t dim = 0, Here here = Here::current()) {
  return split(x, std::vector<int64_t>(sizes), dim, here);
}

/// `chunks` pieces along `dim` of ceil(n / chunks) elements each, the last smaller; like
/// PyTorch this may give fewer pieces (6 elements in 4 chunks -> 2, 2, 2).
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0,
                          Here here = Here::current());

}  // namespace tg
