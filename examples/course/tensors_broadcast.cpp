// file: examples/course/tensors_broadcast.cpp
// Chapter 1: broadcasting. The shape rule on its own, then expand(), which stretches a
// tensor with stride 0 instead of copying it, and copy_(), which broadcasts its source.
#include <fmt/format.h>

#include "core/core.h"

namespace {

void try_shapes(const tg::Shape& a, const tg::Shape& b) {
  try {
    fmt::print("{} with {} -> {}\n", a, b, tg::broadcast_shapes(a, b));
  } catch (const tg::ShapeError& e) {
    fmt::print("{} with {} -> tg::ShapeError: {}\n", a, b, e.what());
  }
}

}  // namespace

int main() {
  // Align at the right; each pair of sizes must be equal or contain a 1.
  try_shapes({8, 1, 6, 1}, {7, 1, 5});
  try_shapes({4, 3}, {3});
  try_shapes({3, 1}, {1, 4});
  try_shapes({}, {2, 3});
  try_shapes({2, 3}, {3, 2});

  // A row of 3 numbers seen as a 4x3 matrix: the new dim gets stride 0.
  const tg::Tensor bias = tg::tensor({10.f, 20.f, 30.f});
  tg::Tensor rows = bias.expand({4, 3});
  fmt::print("\nbias.expand({{4, 3}}): strides {}, shares storage: {}\n{}\n", rows.strides(),
             rows.storage() == bias.storage(), rows);

  // A column of 2 numbers stretched sideways: the size-1 dim gets stride 0.
  const tg::Tensor column = tg::tensor({1.f, 2.f}, {2, 1});
  const tg::Tensor cols = column.expand({2, 3});
  fmt::print("column.expand({{2, 3}}): strides {}\n{}\n", cols.strides(), cols);

  // copy_ broadcasts its source to the destination's shape, with the same rule.
  tg::Tensor m = tg::zeros({4, 3});
  m.copy_(bias);
  fmt::print("zeros(4, 3).copy_(bias) =\n{}\n", m);

  // The four rows of `rows` are the same three floats in memory, so writing is refused.
  try {
    rows.fill_(0);
  } catch (const tg::MisuseError& e) {
    fmt::print("rows.fill_(0) throws tg::MisuseError:\n  {}\n", e.what());
  }
}
