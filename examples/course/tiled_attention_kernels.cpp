// file: examples/course/tiled_attention_kernels.cpp
// Chapter 21: attention's two kernels through the op. The thread's AttentionAlgorithm picks
// the row kernel (chapter 12) or the tiled one; both give the same values and gradients up to
// rounding, for tile sizes that divide T and tile sizes that do not; the node remembers its
// kernel for the backward; and both save the same bytes, linear in T, where the composed
// matmul-softmax-matmul keeps T x T matrices.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

/// out and the gradients of q, k and v, for one upstream gradient, with `algorithm`.
std::vector<tg::Tensor> run(const tg::AttentionAlgorithm& algorithm, const tg::Tensor& q,
                            const tg::Tensor& k, const tg::Tensor& v, const tg::Tensor& gout) {
  tg::AttentionAlgorithmGuard guard(algorithm);
  const tg::Tensor out = tg::scaled_dot_product_attention(q, k, v, {}, /*causal=*/true);
  std::vector<tg::Tensor> all = tg::grad({out}, {q, k, v}, {gout});
  all.insert(all.begin(), out);
  return all;
}

/// The largest |a - b| over every pair of tensors.
double largest_difference(const std::vector<tg::Tensor>& a, const std::vector<tg::Tensor>& b) {
  double worst = 0;
  for (size_t t = 0; t < a.size(); ++t) {
    const std::vector<double> x = a[t].to(tg::kFloat64).to_vector<double>();
    const std::vector<double> y = b[t].to(tg::kFloat64).to_vector<double>();
    for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  }
  return worst;
}

bool same_bits(const std::vector<tg::Tensor>& a, const std::vector<tg::Tensor>& b) {
  for (size_t t = 0; t < a.size(); ++t) {
    if (a[t].contiguous().to_vector<double>() != b[t].contiguous().to_vector<double>())
      return false;
  }
  return true;
}

/// What a framework without a fused attention records: scores, masked, softmax, matmul.
tg::Tensor composed(const tg::Tensor& q, const tg::Tensor& k, const tg::Tensor& v) {
  const int64_t T = q.size(2);
  tg::Tensor hidden = tg::empty({T, T}, tg::kBool);  // key j after query i
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) hidden.data<bool>()[i * T + j] = j > i;
  const tg::Tensor s =
      tg::mul(tg::matmul(q, k.transpose(-2, -1)), 1.0 / std::sqrt(static_cast<double>(q.size(3))));
  return tg::matmul(tg::softmax(tg::masked_fill(s, hidden, -INFINITY), -1), v);
}

}  // namespace

int main() {
  tg::Generator gen(21);
  // q, k, v as a model makes them: (B, T, H, D) split into heads by a transpose.
  auto heads = [&](int64_t B, int64_t T, int64_t H, int64_t D, tg::DType dtype) {
    return tg::randn({B, T, H, D}, dtype, gen).transpose(1, 2).requires_grad_();
  };
  const tg::AttentionAlgorithm rows{};  // kRows: chapter 12's kernel, the default
  auto tiled = [](int64_t tile_q, int64_t tile_k) {
    return tg::AttentionAlgorithm{tg::AttentionKernel::kTiled, tile_q, tile_k};
  };

  // The same attention, row by row and tile by tile. T = 37 is a multiple of no tile size.
  const tg::Tensor q = heads(2, 37, 2, 8, tg::kFloat64), k = heads(2, 37, 2, 8, tg::kFloat64);
  const tg::Tensor v = heads(2, 37, 2, 8, tg::kFloat64);
  const tg::Tensor gout = tg::randn({2, 2, 37, 8}, tg::kFloat64, gen);
  const std::vector<tg::Tensor> by_rows = run(rows, q, k, v, gout);
  fmt::print("float64, 2 x 2 heads x 37 x 8, causal: out, dq, dk, dv against the row kernel\n");
  for (const auto& [tq, tk] :
       {std::pair{1, 1}, std::pair{3, 2}, std::pair{16, 16}, std::pair{128, 128}}) {
    const double d = largest_difference(run(tiled(tq, tk), q, k, v, gout), by_rows);
    fmt::print("  tiles {:>3} x {:>3}: {}\n", tq, tk, d < 1e-13 ? "within 1e-13" : "TOO FAR");
  }
  const tg::Tensor q32 = heads(1, 37, 2, 8, tg::kFloat32), k32 = heads(1, 37, 2, 8, tg::kFloat32);
  const tg::Tensor v32 = heads(1, 37, 2, 8, tg::kFloat32);
  const tg::Tensor gout32 = tg::randn({1, 2, 37, 8}, tg::kFloat32, gen);
  const double d32 =
      largest_difference(run(tiled(8, 8), q32, k32, v32, gout32), run(rows, q32, k32, v32, gout32));
  fmt::print("float32, tiles 8 x 8: {}\n", d32 < 1e-5 ? "within 1e-5" : "TOO FAR");

  // The node records the algorithm: its backward runs the forward's kernel, whatever the
  // thread's choice is by then.
  tg::Tensor out;
  {
    tg::AttentionAlgorithmGuard guard(tiled(3, 2));
    out = tg::scaled_dot_product_attention(q, k, v, {}, /*causal=*/true);
  }
  std::vector<tg::Tensor> later;
  {
    tg::AttentionAlgorithmGuard guard(rows);
    later = tg::grad({out}, {q, k, v}, {gout});
  }
  later.insert(later.begin(), out);
  fmt::print("forward with tiles 3 x 2, backward under a rows guard: the tiled bits: {}\n",
             same_bits(later, run(tiled(3, 2), q, k, v, gout)));

  // What the tape keeps for the backward, float32, 1 x 4 heads x T x 16, causal.
  fmt::print("saved for backward (bytes), float32, 1 x 4 heads x T x 16, causal:\n");
  fmt::print("{:>6} {:>9} {:>9} {:>10} {:>10}\n", "T", "rows", "tiled", "composed", "P alone");
  for (const int64_t T : {64, 256, 1024}) {
    const tg::Tensor qt = heads(1, T, 4, 16, tg::kFloat32), kt = heads(1, T, 4, 16, tg::kFloat32);
    const tg::Tensor vt = heads(1, T, 4, 16, tg::kFloat32);
    int64_t saved[2];
    for (int i = 0; i < 2; ++i) {
      tg::AttentionAlgorithmGuard guard(i == 0 ? rows : tiled(128, 128));
      saved[i] = tg::nn::measure_step(
                     tg::sum(tg::scaled_dot_product_attention(qt, kt, vt, {}, /*causal=*/true)))
                     .saved_bytes;
    }
    const int64_t by_composed = tg::nn::measure_step(tg::sum(composed(qt, kt, vt))).saved_bytes;
    fmt::print("{:>6} {:>9} {:>9} {:>10} {:>10}\n", T, saved[0], saved[1], by_composed,
               4 * T * T * 4);
  }
  fmt::print("scores in flight in a 128 x 128 tile of float32: {} bytes, whatever T\n",
             128 * 128 * sizeof(float));
}
