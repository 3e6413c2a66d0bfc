// file: examples/course/activations_swiglu.cpp
// Chapter 5: the fused silu_and_mul against its composition from primitives. One (2, 6)
// input is read as two rows [a | b] of width 3; the fused op and the composed twin must give
// the same output and the same gradient, and the fused one records a single tape node.
#include <fmt/format.h>

#include <cmath>

#include "core/core.h"
#include "ops/ops.h"

namespace {

// silu(a) * b from primitives: a / (1 + e^-a) * b, with a and b as views of the halves.
tg::Tensor composed(const tg::Tensor& x) {
  const int64_t h = x.size(-1) / 2;
  const tg::Tensor a = x.narrow(-1, 0, h), b = x.narrow(-1, h, h);
  return tg::mul(tg::div(a, tg::add(tg::exp(tg::neg(a)), 1.0)), b);
}

double max_abs_diff(const tg::Tensor& p, const tg::Tensor& q) {
  double m = 0;
  const auto u = p.to_vector<double>(), v = q.to_vector<double>();
  for (size_t i = 0; i < u.size(); ++i) m = std::max(m, std::abs(u[i] - v[i]));
  return m;
}

}  // namespace

int main() {
  const tg::Tensor values =
      tg::tensor({-2.0, 0.0, 1.0, 3.0, -1.0, 0.5, 0.5, 2.0, -1.0, 1.0, 4.0, -2.0}, {2, 6});
  tg::Tensor x = values.clone().requires_grad_();
  tg::Tensor xc = values.clone().requires_grad_();

  const tg::Tensor y = tg::silu_and_mul(x);
  const tg::Tensor yc = composed(xc);
  fmt::print("x:\n{}\nsilu_and_mul(x):\n{}\n", values.to_string(), y.to_string());
  fmt::print("fused vs composed, forward: {}\n",
             max_abs_diff(y, yc) < 1e-15 ? "equal to 1e-15" : "DIFFERENT");

  tg::backward(y, tg::ones_like(y));
  tg::backward(yc, tg::ones_like(yc));
  fmt::print("dx (fused):\n{}\n", x.grad().to_string());
  fmt::print("fused vs composed, backward: {}\n",
             max_abs_diff(x.grad(), xc.grad()) < 1e-15 ? "equal to 1e-15" : "DIFFERENT");
}
