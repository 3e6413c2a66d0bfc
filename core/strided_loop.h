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

/// Calls fn(offsets) for each index of rows [row_begin, row_end) of `shape`, in row-major
/// order, where a row is one run along the last dim (shape has rows_of(shape) rows) and
/// offsets[k] is the element offset of that index under strides[k].
template <size_t N, class Fn>
void for_each_offset_in_rows(const Shape& shape, const std::array<const Strides*, N>& strides,
                             int64_t row_begin, int64_t row_end, Fn&& fn) {
  std::array<int64_t, N> off{};
  const size_t rank = shape.size();
  if (rank == 0) {  // a 0-d tensor has exactly one element, in its one row
    if (row_begin < row_end) fn(off);
    return;
  }
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  // Start the odometer at row_begin: its index in each dim, right to left.
  DimVec index(rank, 0);
  int64_t r = row_begin;
  for (size_t d = rank - 1; d-- > 0;) {
    index[d] = r % shape[d];
    r /= shape[d];
    for (size_t k = 0; k < N; ++k) off[k] += index[d] * (*strides[k])[d];
  }
  const int64_t inner = shape[rank - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = (*strides[k])[rank - 1];

  for (int64_t row = row_begin; row < row_end; ++row) {
    std::array<int64_t, N> o = off;
    for (int64_t i = 0; i < inner; ++i) {
      fn(o);
      for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    // Odometer carry over dims rank-2 .. 0.
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) off[k] += (*strides[k])[d];
      if (++index[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= (*strides[k])[d] * shape[d];
      index[d] = 0;
    }
  }
}

/// The number of rows for for_each_offset_in_rows: the product of all dims but the last (1
/// for a 0-d or 1-d shape).
inline int64_t rows_of(const Shape& shape) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
  return rows;
}

/// Calls fn(offsets) for each index of `shape` in row-major order, where offsets[k] is
/// the element offset of that index under strides[k]. Does nothing for an empty shape.
template <size_t N, class Fn>
void for_each_offset(const Shape& shape, const std::array<const Strides*, N>& strides, Fn&& fn) {
  for_each_offset_in_rows<N>(shape, strides, 0, rows_of(shape), fn);
}

}  // namespace tg::detail
