// examples/tour.cpp — a first look at tapegrad's tensors: printing, views and broadcasting.
//
// Run it with `build/bin/tour`. Every tensor below prints the way PyTorch prints it.
#include <fmt/format.h>

#include "core/core.h"

int main() {
  // A tensor is a shape, strides and an offset over shared storage.
  tg::Tensor x = tg::arange(6.0).view({2, 3});
  fmt::print("x = arange(6).view({{2, 3}})\n{}\nshape {} strides {}\n\n", x, x.shape(),
             x.strides());

  // Views reuse the same memory: a transpose only swaps two sizes and two strides.
  tg::Tensor xt = x.t();
  fmt::print("x.t(): shape {} strides {} contiguous={}\n{}\n\n", xt.shape(), xt.strides(),
             xt.is_contiguous(), xt);

  // Writing through a view is seen by its base.
  x.select(1, 2).fill_(-1.5);
  fmt::print("after x.select(1, 2).fill_(-1.5), x is\n{}\n\n", x);

  // An image batch [B, C, H, W] becomes a sequence of pixels [B, H*W, C]. permute is a
  // view; so is the reshape, because after the permute H and W are still adjacent in
  // memory (strides W and 1) and merge into one dim of stride 1.
  tg::Tensor img = tg::arange(2 * 3 * 2 * 2).view({2, 3, 2, 2});
  tg::Tensor seq = img.permute({0, 2, 3, 1}).reshape({2, 4, 3});
  fmt::print("[B, C, H, W] = {} -> [B, H*W, C] = {}, strides {}, shares storage: {}\n{}\n\n",
             img.shape(), seq.shape(), seq.strides(), seq.storage() == img.storage(), seq);

  // Broadcasting: a column (3, 1) and a row (4) stretch to (3, 4) with stride 0, no copy.
  tg::Tensor col = tg::tensor({10.f, 20.f, 30.f}, {3, 1});
  tg::Tensor row = tg::arange(4.0);
  const tg::Shape both = tg::broadcast_shapes(col.shape(), row.shape());
  tg::Tensor col_b = col.expand(both), row_b = row.expand(both);
  fmt::print("broadcast {} with {} -> {}\n", col.shape(), row.shape(), both);
  fmt::print("column expanded, strides {}:\n{}\nrow expanded, strides {}:\n{}\n\n", col_b.strides(),
             col_b, row_b.strides(), row_b);

  // copy_ broadcasts its source and converts its dtype.
  tg::Tensor grid = tg::zeros({3, 4}, tg::kFloat16);
  grid.copy_(row);
  fmt::print("zeros(3, 4, float16).copy_(row):\n{}\n\n", grid);

  // float16 keeps only 11 significant bits: 2049 is not representable.
  fmt::print("tensor([2049.]).to(float16) = {}\n", tg::tensor({2049.f}).to(tg::kFloat16));
  // Bad input gets a tg:: error that names the op and the shapes.
  try {
    x.view({4});
  } catch (const tg::ShapeError& e) {
    fmt::print("x.view({{4}}) -> tg::ShapeError: {}\n", e.what());
  }
  return 0;
}
