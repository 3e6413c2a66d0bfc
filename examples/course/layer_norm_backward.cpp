// file: examples/course/layer_norm_backward.cpp
// Chapter 9: LayerNorm on one row of C = 4, forward and backward worked by hand with the
// formulas of the chapter, then by tg::layer_norm, then by the same math composed from
// primitives. Then the two properties that the mean subtraction adds over RMSNorm.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace {

void print_row(const char* name, const std::vector<double>& v) {
  fmt::print("  {:<4}", name);
  for (double e : v) fmt::print(" {:+.6f}", e);
  fmt::print("\n");
}

std::vector<double> values(const tg::Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }

double largest_difference(const tg::Tensor& a, const tg::Tensor& b) {
  double d = 0;
  const std::vector<double> va = values(a), vb = values(b);
  for (size_t i = 0; i < va.size(); ++i) d = std::max(d, std::abs(va[i] - vb[i]));
  return d;
}

}  // namespace

int main() {
  const std::vector<double> x = {1.0, -2.0, 3.0, 0.5};
  const std::vector<double> w = {1.0, 0.5, 2.0, -1.0};
  const std::vector<double> b = {0.0, 0.1, 0.2, 0.3};
  const std::vector<double> dout = {0.1, 0.2, -0.3, 0.4};
  const double eps = 1e-5;
  const int64_t C = 4;

  // By hand: mu = mean(x), var = mean((x - mu)^2), s = (var + eps)^(-1/2), xh = (x - mu) * s.
  double mu = 0, var = 0;
  for (double v : x) mu += v / C;
  for (double v : x) var += (v - mu) * (v - mu) / C;
  const double s = 1 / std::sqrt(var + eps);
  std::vector<double> xh, gh;
  double mean_gh = 0, mean_gh_xh = 0;
  for (int64_t c = 0; c < C; ++c) {
    xh.push_back((x[c] - mu) * s);
    gh.push_back(dout[c] * w[c]);  // the gradient reaching xh
    mean_gh += gh[c] / C;
    mean_gh_xh += gh[c] * xh[c] / C;
  }
  std::vector<double> y, dx, dw;
  for (int64_t c = 0; c < C; ++c) {
    y.push_back(xh[c] * w[c] + b[c]);
    dx.push_back(s * (gh[c] - mean_gh - xh[c] * mean_gh_xh));
    dw.push_back(dout[c] * xh[c]);
  }
  fmt::print("by hand: mu = {:.6f}, var = {:.6f}, s = {:.6f}\n", mu, var, s);
  fmt::print("         mean(gh) = {:.6f}, mean(gh * xh) = {:.6f}\n", mean_gh, mean_gh_xh);
  print_row("y", y);
  print_row("dx", dx);
  print_row("dw", dw);
  print_row("db", dout);

  // The fused op: one node on the tape, its backward the formula above.
  const tg::Tensor tx = tg::tensor(x).requires_grad_();
  const tg::Tensor tw = tg::tensor(w).requires_grad_();
  const tg::Tensor tb = tg::tensor(b).requires_grad_();
  const tg::Tensor ty = tg::layer_norm(tx, tw, tb, eps);
  const auto g = tg::grad({ty}, {tx, tw, tb}, {tg::tensor(dout)});
  fmt::print("tg::layer_norm (node '{}'):\n", ty.grad_fn()->name());
  print_row("y", values(ty));
  print_row("dx", values(g[0]));
  print_row("dw", values(g[1]));
  print_row("db", values(g[2]));

  // The same math from primitives: eight nodes, each with its own small backward.
  const tg::Tensor xc = tg::sub(tx, tg::mean(tx, {-1}, true));
  const tg::Tensor var_t = tg::mean(tg::mul(xc, xc), {-1}, true);
  const tg::Tensor yc = tg::add(tg::mul(tg::mul(xc, tg::rsqrt(tg::add(var_t, eps))), tw), tb);
  const auto gc = tg::grad({yc}, {tx, tw, tb}, {tg::tensor(dout)});
  double diff = largest_difference(ty, yc);
  for (int i = 0; i < 3; ++i) diff = std::max(diff, largest_difference(g[i], gc[i]));
  fmt::print("composed from sub, mean, mul, add, rsqrt: largest difference {}\n",
             diff < 1e-12 ? "below 1e-12" : fmt::format("{:g}", diff));

  // What the mean subtraction buys, and what it costs in the backward.
  double sum_dx = 0, sum_dx_xh = 0;
  for (int64_t c = 0; c < C; ++c) sum_dx += dx[c], sum_dx_xh += dx[c] * xh[c];
  auto tiny = [](double v) { return std::abs(v) < 1e-12 ? "0 (below 1e-12)" : "NOT 0"; };
  fmt::print("sum(dx) = {}, sum(dx * xh) = {:+.1e} (0 when eps = 0)\n", tiny(sum_dx), sum_dx_xh);
  const tg::Tensor shifted = tg::add(tg::tensor(x), 10.0);
  const double ln_change =
      largest_difference(tg::layer_norm(shifted, tg::tensor(w), tg::tensor(b)), ty);
  fmt::print("x + 10: layer_norm changes by {}, rms_norm by {:.3f}\n", tiny(ln_change),
             largest_difference(tg::rms_norm(shifted, tg::tensor(w)),
                                tg::rms_norm(tg::tensor(x), tg::tensor(w))));
  return 0;
}
