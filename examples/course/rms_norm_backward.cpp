// file: examples/course/rms_norm_backward.cpp
// Chapter 6: RMSNorm on one row of C = 4, forward and backward worked by hand with the
// formulas of the chapter, then by tg::rms_norm, then by the same math composed from
// primitives. All three must agree.
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

}  // namespace

int main() {
  const std::vector<double> x = {1.0, -2.0, 3.0, 0.5};
  const std::vector<double> w = {1.0, 0.5, 2.0, -1.0};
  const std::vector<double> dout = {0.1, 0.2, -0.3, 0.4};
  const double eps = 1e-5;
  const int64_t C = 4;

  // By hand: ms = mean(x^2), s = (ms + eps)^(-1/2), y = x * s * w.
  double ms = 0;
  for (double v : x) ms += v * v;
  ms /= C;
  const double s = 1 / std::sqrt(ms + eps);
  double dot = 0;  // sum_c(dout_c * w_c * x_c)
  for (int64_t c = 0; c < C; ++c) dot += dout[c] * w[c] * x[c];
  std::vector<double> y, dx, dw;
  for (int64_t c = 0; c < C; ++c) {
    y.push_back(x[c] * s * w[c]);
    dx.push_back(s * (dout[c] * w[c] - x[c] * s * s * dot / C));
    dw.push_back(dout[c] * x[c] * s);
  }
  fmt::print("by hand: ms = {:.6f}, s = {:.6f}, sum(dout * w * x) = {:.6f}\n", ms, s, dot);
  print_row("y", y);
  print_row("dx", dx);
  print_row("dw", dw);

  // tapegrad's fused op: one node on the tape, its own backward.
  const tg::Tensor xt = tg::tensor(x).requires_grad_();
  const tg::Tensor wt = tg::tensor(w).requires_grad_();
  const tg::Tensor yt = tg::rms_norm(xt, wt, eps);
  const auto g = tg::grad({yt}, {xt, wt}, {tg::tensor(dout)});
  fmt::print("tg::rms_norm (node '{}'):\n", yt.grad_fn()->name());
  print_row("y", values(yt));
  print_row("dx", values(g[0]));
  print_row("dw", values(g[1]));

  // The composed twin: six nodes, each with its own small backward.
  const tg::Tensor ms_t = tg::mean(tg::mul(xt, xt), {-1}, /*keepdim=*/true);
  const tg::Tensor yc = tg::mul(tg::mul(xt, tg::rsqrt(tg::add(ms_t, eps))), wt);
  const auto gc = tg::grad({yc}, {xt, wt}, {tg::tensor(dout)});
  double worst = 0;
  for (const auto& [a, b] : {std::pair{yt, yc}, std::pair{g[0], gc[0]}, std::pair{g[1], gc[1]}}) {
    const std::vector<double> va = values(a), vb = values(b);
    for (size_t i = 0; i < va.size(); ++i) worst = std::max(worst, std::abs(va[i] - vb[i]));
  }
  fmt::print("composed from mul, mean, add, rsqrt: largest difference {}\n",
             worst < 1e-12 ? "below 1e-12" : "TOO LARGE");
}
