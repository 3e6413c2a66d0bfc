// file: examples/course/attention_backward.cpp
// Chapter 12: attention for one head, Tq = Tk = 3, D = Dv = 2, causal. The forward and the
// backward worked with plain loops and the formulas of the chapter (P, dP, delta, dS), then
// by tg::scaled_dot_product_attention, then by the same math composed from primitives.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace {

using Matrix = std::vector<std::vector<double>>;

void print_matrix(const char* name, const Matrix& m) {
  fmt::print("  {:<6}", name);
  for (const auto& row : m) {
    fmt::print(" [");
    for (double e : row) fmt::print(" {:+.4f}", e);
    fmt::print(" ]");
  }
  fmt::print("\n");
}

/// A (1, 1, T, D) tensor as a T x D matrix.
Matrix rows(const tg::Tensor& t) {
  const std::vector<double> v = t.to(tg::kFloat64).to_vector<double>();
  const auto n = static_cast<size_t>(t.size(2)), d = static_cast<size_t>(t.size(3));
  Matrix m(n, std::vector<double>(d));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < d; ++j) m[i][j] = v[i * d + j];
  return m;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

int main() {
  const Matrix q = {{1.0, 0.0}, {0.5, -1.0}, {-1.0, 2.0}};
  const Matrix k = {{1.0, 1.0}, {0.0, 2.0}, {-1.0, 0.5}};
  const Matrix v = {{1.0, 0.0}, {0.0, 1.0}, {2.0, -1.0}};
  const Matrix dout = {{0.5, -0.5}, {1.0, 0.0}, {0.0, 1.0}};
  const size_t T = 3;
  const double scale = 1 / std::sqrt(2.0);

  // Forward by hand: s = scale q k^T with j > i masked, p = softmax(s), out = p v.
  Matrix p(T, std::vector<double>(T, 0.0)), out(T, std::vector<double>(2, 0.0));
  for (size_t i = 0; i < T; ++i) {
    double max = -INFINITY, sum = 0;
    for (size_t j = 0; j <= i; ++j) max = std::max(max, scale * dot(q[i], k[j]));
    for (size_t j = 0; j <= i; ++j) sum += p[i][j] = std::exp(scale * dot(q[i], k[j]) - max);
    for (size_t j = 0; j <= i; ++j) {
      p[i][j] /= sum;
      for (size_t c = 0; c < 2; ++c) out[i][c] += p[i][j] * v[j][c];
    }
  }
  // Backward by hand: dv = P^T dout; dp = dout v^T; delta = rowsum(dout o out);
  // ds = p o (dp - delta); dq = scale ds k; dk = scale ds^T q.
  Matrix dq(T, {0.0, 0.0}), dk(T, {0.0, 0.0}), dv(T, {0.0, 0.0}), ds(T, {0.0, 0.0, 0.0});
  for (size_t i = 0; i < T; ++i) {
    const double delta = dot(dout[i], out[i]);
    for (size_t j = 0; j <= i; ++j) {
      ds[i][j] = p[i][j] * (dot(dout[i], v[j]) - delta);
      for (size_t c = 0; c < 2; ++c) {
        dv[j][c] += p[i][j] * dout[i][c];
        dq[i][c] += scale * ds[i][j] * k[j][c];
        dk[j][c] += scale * ds[i][j] * q[i][c];
      }
    }
  }
  fmt::print("by hand:\n");
  print_matrix("P", p);
  print_matrix("out", out);
  print_matrix("dS", ds);
  print_matrix("dq", dq);
  print_matrix("dk", dk);
  print_matrix("dv", dv);

  // tapegrad's fused op: one node, q k v and one logsumexp per query saved.
  auto as_tensor = [](const Matrix& m) {
    std::vector<double> flat;
    for (const auto& row : m) flat.insert(flat.end(), row.begin(), row.end());
    return tg::tensor(flat, {1, 1, static_cast<int64_t>(m.size()), 2});
  };
  const tg::Tensor qt = as_tensor(q).requires_grad_(), kt = as_tensor(k).requires_grad_();
  const tg::Tensor vt = as_tensor(v).requires_grad_();
  const tg::Tensor ot = tg::scaled_dot_product_attention(qt, kt, vt, {}, /*causal=*/true);
  const auto g = tg::grad({ot}, {qt, kt, vt}, {as_tensor(dout)});
  fmt::print("tg::scaled_dot_product_attention (node '{}'):\n", ot.grad_fn()->name());
  print_matrix("out", rows(ot));
  print_matrix("dq", rows(g[0]));
  print_matrix("dk", rows(g[1]));
  print_matrix("dv", rows(g[2]));

  // The composed twin: matmul, mul, where, amax, sub, exp, sum, div, matmul.
  tg::Tensor s = tg::mul(tg::matmul(qt, kt.transpose(-2, -1)), scale);
  const tg::Tensor keep =
      tg::tensor({true, false, false, true, true, false, true, true, true}, {3, 3});
  s = tg::where(keep, s, tg::full({}, -INFINITY, tg::kFloat64));
  const tg::Tensor e = tg::exp(tg::sub(s, tg::amax(s, {-1}, true).detach()));
  const tg::Tensor oc = tg::matmul(tg::div(e, tg::sum(e, {-1}, true)), vt);
  const auto gc = tg::grad({oc}, {qt, kt, vt}, {as_tensor(dout)});
  double worst = 0;
  for (const auto& [a, b] : {std::pair{ot, oc}, std::pair{g[0], gc[0]}, std::pair{g[1], gc[1]},
                             std::pair{g[2], gc[2]}}) {
    const Matrix ma = rows(a), mb = rows(b);
    for (size_t i = 0; i < ma.size(); ++i)
      for (size_t c = 0; c < ma[i].size(); ++c)
        worst = std::max(worst, std::abs(ma[i][c] - mb[i][c]));
  }
  fmt::print("composed from 9 primitive ops: largest difference {}\n",
             worst < 1e-12 ? "below 1e-12" : "TOO LARGE");
}
