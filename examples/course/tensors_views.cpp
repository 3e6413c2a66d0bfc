// file: examples/course/tensors_views.cpp
// Chapter 1: views share memory with their base, copies do not. Writes through views,
// checks which results share storage, and shows view() refusing what reshape() copies.
#include <fmt/format.h>

#include "core/core.h"

int main() {
  tg::Tensor m = tg::arange(6).view({2, 3});
  fmt::print("m =\n{}\n", m);

  // Three views of m: a row, a column and the transpose. None of them copies anything.
  tg::Tensor row = m.select(0, 1);  // m[1]
  tg::Tensor col = m.select(1, 2);  // m[:, 2]
  tg::Tensor mt = m.t();
  fmt::print("row: shape {}, strides {}, offset {}\n", row.shape(), row.strides(),
             row.storage_offset());
  fmt::print("col: shape {}, strides {}, offset {}\n", col.shape(), col.strides(),
             col.storage_offset());
  fmt::print("mt:  shape {}, strides {}, offset {}\n", mt.shape(), mt.strides(),
             mt.storage_offset());
  fmt::print("all share m's storage: {}\n", row.storage() == m.storage() &&
                                                col.storage() == m.storage() &&
                                                mt.storage() == m.storage());

  // Writing through a view writes into m.
  row.fill_(-1);
  fmt::print("\nafter row.fill_(-1), m =\n{}\n", m);
  mt.select(0, 0).copy_(tg::tensor({10.f, 20.f}));  // row 0 of m^T is column 0 of m
  fmt::print("after mt[0].copy_([10, 20]), m =\n{}\n", m);

  // A clone owns new memory: writing into it leaves m alone.
  tg::Tensor c = m.clone();
  c.fill_(0);
  fmt::print("after c = m.clone(); c.fill_(0), m =\n{}\n", m);

  // reshape is a view when the strides allow it and a copy when they do not.
  const tg::Tensor r1 = m.reshape({3, 2});
  const tg::Tensor r2 = mt.reshape({6});
  fmt::print("\nm.reshape({{3, 2}}) shares m's storage: {}\n", r1.storage() == m.storage());
  fmt::print("mt.reshape({{6}}) shares m's storage: {}\n", r2.storage() == m.storage());
  fmt::print("mt.reshape({{6}}) = {}\n", r2);

  // view never copies, so it refuses instead.
  try {
    mt.view({6});
  } catch (const tg::ShapeError& e) {
    fmt::print("mt.view({{6}}) throws tg::ShapeError:\n  {}\n", e.what());
  }
}
