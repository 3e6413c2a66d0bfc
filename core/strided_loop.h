// core/strided_loop.h — visiting every element of one or more strided tensors.
//
// An N-d loop written as one flat loop over the last dim plus an odometer for the
// others: after each row, bump the index of the next dim to the left, and when it
// reaches its size, reset it to 0 and carry into the dim before. Each operand keeps a
// running element offset that moves by its own stride, so the same loop walks a
// contiguous tensor, a transposed view, and a broadcast view (stride 0) alike.
#pragma once

#include <array>
#include <cstdint>

#include "core/shape.h"

namespace tg::detail {

/// Calls fn(offsets) for each index of `shape` in row-major order, where offsets[k] is
/// the element offset of that index under strides[k]. Does nothing for an empty shape.
template <size_t N, class Fn>
void for_each_offset(const Shape& shape, const std::array<const Strides*, N>& strides, Fn&& fn) {
  std::array<int64_t, N> off{};
  const size_t rank = shape.size();
  if (rank == 0) {  // a 0-d tensor has exactly one element
    fn(off);
    return;
  }
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  DimVec index(rank, 0);
  const int64_t inner = shape[rank - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = (*strides[k])[rank - 1];

  while (true) {
    std::array<int64_t, N> o = off;
    for (int64_t i = 0; i < inner; ++i) {
      fn(o);
      for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    // Odometer carry over dims rank-2 .. 0.
    size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      for (size_t k = 0; k < N; ++k) off[k] += (*strides[k])[d];
      if (++index[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= (*strides[k])[d] * shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace tg::detail
