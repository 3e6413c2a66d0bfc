// file: examples/course/softmax_backward.cpp
// Chapter 7: the backward of cross-entropy is softmax minus the target distribution, worked
// by hand for one row, then by tg::cross_entropy, then by the same loss composed from
// primitives (log_softmax spelled out, gather, ...). All three must agree.
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

}  // namespace

int main() {
  const std::vector<double> x = {2.0, 1.0, 0.1, -1.0};  // one row of C = 4 logits
  const int64_t target = 0, C = 4;

  for (double e : {0.0, 0.1}) {
    fmt::print("label_smoothing = {}:\n", e);
    // By hand: p = softmax(x), q = (1 - e) * onehot + e / C, loss = -sum(q * log p),
    // dloss/dx = p - q.
    double m = x[0];
    for (double v : x) m = std::max(m, v);
    double s = 0;
    for (double v : x) s += std::exp(v - m);
    std::vector<double> p, q, dx;
    double loss = 0;
    for (int64_t c = 0; c < C; ++c) {
      p.push_back(std::exp(x[c] - m) / s);
      q.push_back((c == target ? 1 - e : 0.0) + e / C);
      loss -= q[c] * std::log(p[c]);
      dx.push_back(p[c] - q[c]);
    }
    print_row("p", p);
    print_row("q", q);
    fmt::print("  by hand:   loss {:.6f}\n", loss);
    print_row("p - q", dx);

    // tapegrad's fused op: one node, backward (p - q) * dloss.
    const tg::Tensor xt = tg::tensor(x, {1, C}).requires_grad_();
    const tg::Tensor t = tg::tensor(std::vector<int64_t>{target}, {1});
    const tg::Tensor fused = tg::cross_entropy(xt, t, {.label_smoothing = e});
    const tg::Tensor dfused = tg::grad({fused}, {xt})[0];
    fmt::print("  fused:     loss {:.6f}\n", fused.item<double>());
    print_row("dx", values(dfused));

    // Composed: logp = (x - max) - log(sum(exp(x - max))), then -sum(q * logp).
    const tg::Tensor z = tg::sub(xt, tg::amax(xt, {-1}, true));
    const tg::Tensor logp = tg::sub(z, tg::log(tg::sum(tg::exp(z), {-1}, true)));
    const tg::Tensor nll = tg::neg(tg::gather(logp, -1, t.unsqueeze(-1)));
    const tg::Tensor smooth = tg::neg(tg::sum(logp, {-1}, true));
    const tg::Tensor composed = tg::sum(tg::add(tg::mul(nll, 1 - e), tg::mul(smooth, e / C)));
    const tg::Tensor dcomposed = tg::grad({composed}, {xt})[0];
    double worst = std::abs(composed.item<double>() - fused.item<double>());
    for (size_t i = 0; i < 4; ++i) {
      worst = std::max(worst, std::abs(values(dfused)[i] - values(dcomposed)[i]));
    }
    fmt::print("  composed from amax, exp, sum, log, gather: largest difference {}\n",
               worst < 1e-12 ? "below 1e-12" : "TOO LARGE");
  }
}
