// file: examples/course/rope_rotation.cpp
// Chapter 11: RoPE on a few vectors. The rotate-half pairing worked by hand, the pair norms,
// the relative-position property of the scores, and the backward as the inverse rotation.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace {

void print_row(const char* name, const std::vector<double>& v) {
  fmt::print("  {:<10}", name);
  for (double e : v) fmt::print(" {:+.6f}", e);
  fmt::print("\n");
}

std::vector<double> values(const tg::Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }

tg::Tensor at(int64_t position) { return tg::tensor(std::vector<int64_t>{position}); }

double dot(const tg::Tensor& a, const tg::Tensor& b) { return values(tg::sum(tg::mul(a, b)))[0]; }

}  // namespace

int main() {
  // D = 4, theta = 100: pairs (x0, x2) at frequency 100^0 = 1 and (x1, x3) at 100^(-1/2).
  const std::vector<double> x = {1.0, 2.0, 3.0, 4.0};
  const int64_t p = 2;
  const double a0 = p * 1.0, a1 = p * std::pow(100.0, -0.5);
  const std::vector<double> by_hand = {
      x[0] * std::cos(a0) - x[2] * std::sin(a0), x[1] * std::cos(a1) - x[3] * std::sin(a1),
      x[2] * std::cos(a0) + x[0] * std::sin(a0), x[3] * std::cos(a1) + x[1] * std::sin(a1)};
  const tg::Tensor tx = tg::tensor(x, {1, 4}).requires_grad_();
  const tg::Tensor y = tg::rope(tx, at(p), 100.0);
  fmt::print("position {}, angles {:.1f} and {:.1f} rad:\n", p, a0, a1);
  print_row("x", x);
  print_row("by hand", by_hand);
  print_row("tg::rope", values(y));
  const std::vector<double> vy = values(y);
  fmt::print("  pair norms: x ({:.4f}, {:.4f})  y ({:.4f}, {:.4f})\n", std::hypot(x[0], x[2]),
             std::hypot(x[1], x[3]), std::hypot(vy[0], vy[2]), std::hypot(vy[1], vy[3]));

  // Scores between a query at m and a key at n depend on n - m only.
  tg::Generator gen(7);
  const tg::Tensor q = tg::randn({1, 8}, tg::kFloat64, gen);
  const tg::Tensor k = tg::randn({1, 8}, tg::kFloat64, gen);
  fmt::print("scores <rope(q, m), rope(k, n)>:\n");
  for (auto [m, n] : {std::pair{5, 2}, {13, 10}, {1003, 1000}, {5, 1}}) {
    fmt::print("  m = {:4}, n = {:4}, m - n = {}: {:+.9f}\n", m, n, m - n,
               dot(tg::rope(q, at(m)), tg::rope(k, at(n))));
  }

  // The backward is the rotation by minus the angles: rope of the gradient at -p.
  const tg::Tensor gout = tg::tensor({0.1, -0.2, 0.3, 0.4}, {1, 4});
  const tg::Tensor dx = tg::grad({y}, {tx}, {gout})[0];
  fmt::print("backward:\n");
  print_row("dx", values(dx));
  print_row("rope(g,-p)", values(tg::rope(gout, at(-p), 100.0)));
  return 0;
}
