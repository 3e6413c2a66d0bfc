// file: examples/course/linear_backward.cpp
// Chapter 4: linear forward and backward on a tiny (B, T, C) batch, checked by hand, and
// the fused op against its composition from primitives.
#include <fmt/format.h>

#include "core/core.h"
#include "ops/ops.h"

int main() {
  // x (B=1, T=2, C=2), W (out=3, in=2), b (3)
  const tg::Tensor x = tg::tensor({1.0, 2.0, 3.0, 4.0}, {1, 2, 2}).requires_grad_();
  const tg::Tensor w = tg::tensor({1.0, 0.0, 1.0, -1.0, 0.5, 2.0}, {3, 2}).requires_grad_();
  const tg::Tensor b = tg::tensor({10.0, 20.0, 30.0}).requires_grad_();
  const tg::Tensor y = tg::linear(x, w, b);
  fmt::print("y = linear(x, W, b), shape {}:\n{}\n\n", y.shape(), y);

  // Upstream gradient dy, the shape of y.
  const tg::Tensor dy = tg::tensor({1.0, 0.0, 2.0, 0.0, 1.0, 1.0}, {1, 2, 3});
  const auto g = tg::grad({y}, {x, w, b}, {dy});
  fmt::print("dx = dy W:\n{}\n", g[0]);
  fmt::print("dW = dy^T x, summed over B and T:\n{}\n", g[1]);
  fmt::print("db = dy summed over B and T:\n{}\n\n", g[2]);

  // The same numbers from primitives: matmul with the transposed weight, then add.
  const tg::Tensor yc = tg::add(tg::matmul(x, w.t()), b);
  const auto gc = tg::grad({yc}, {x, w, b}, {dy});
  auto max_diff = [](const tg::Tensor& a, const tg::Tensor& c) {
    return tg::amax(tg::abs(tg::sub(a, c))).item<double>();
  };
  fmt::print("fused vs composed, max |difference|: y {}, dx {}, dW {}, db {}\n", max_diff(y, yc),
             max_diff(g[0], gc[0]), max_diff(g[1], gc[1]), max_diff(g[2], gc[2]));
}
