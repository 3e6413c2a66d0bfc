// file: examples/course/attention_block.cpp
// Chapter 12: the attention half of a pre-norm Transformer block, multi-head and causal,
// h = x + W_o merge(attention(split(W_qkv rms_norm(x)))); then what the attention node saves,
// compared with the T x T matrix it does not save; then a query with no visible key.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

int main() {
  tg::Generator gen(12);
  const int64_t B = 2, T = 5, C = 8, H = 2, D = C / H;
  const tg::Tensor x = tg::randn({B, T, C}, tg::kFloat32, gen);
  const tg::Tensor norm_w = tg::ones({C});
  const tg::Tensor w_qkv = tg::mul(tg::randn({3 * C, C}, tg::kFloat32, gen), 0.3).requires_grad_();
  const tg::Tensor w_o = tg::mul(tg::randn({C, C}, tg::kFloat32, gen), 0.3).requires_grad_();

  // (B, T, C) -> three (B, T, C) -> each (B, T, H, D) -> (B, H, T, D): a view, not a copy.
  const tg::Tensor qkv = tg::linear(tg::rms_norm(x, norm_w), w_qkv);
  const std::vector<tg::Tensor> parts = tg::chunk(qkv, 3, -1);
  auto heads = [&](const tg::Tensor& t) { return t.view({B, T, H, D}).transpose(1, 2); };
  const tg::Tensor q = heads(parts[0]), k = heads(parts[1]), v = heads(parts[2]);
  fmt::print("q {} contiguous: {}\n", q.shape(), q.is_contiguous());
  const tg::Tensor a = tg::scaled_dot_product_attention(q, k, v, {}, /*causal=*/true);
  // (B, H, T, D) -> (B, T, H, D) -> (B, T, C): heads side by side again, then W_o.
  const tg::Tensor h = tg::add(x, tg::linear(a.transpose(1, 2).reshape({B, T, C}), w_o));
  fmt::print("attention out {} -> block out {}\n", a.shape(), h.shape());
  tg::sum(h).backward();
  fmt::print("grad of W_qkv {}, of W_o {}\n", w_qkv.grad().shape(), w_o.grad().shape());

  // Causal: query 0 sees only key 0, so its output is v_0, in every batch and head.
  double worst = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t hd = 0; hd < H; ++hd)
      for (int64_t d = 0; d < D; ++d)
        worst = std::max(worst, static_cast<double>(std::abs(a.at<float>({b, hd, 0, d}) -
                                                             v.at<float>({b, hd, 0, d}))));
  fmt::print("query 0 outputs v_0: largest difference {}\n", worst);

  // Memory: the node keeps q, k, v, out (the output it returned: no extra memory) and one
  // logsumexp per query, not the probabilities P (B, H, T, T).
  for (int64_t t : {64, 256, 1024}) {
    const tg::Tensor qt = tg::randn({1, 4, t, 16}, tg::kFloat32, gen).requires_grad_();
    const tg::Tensor kt = tg::randn({1, 4, t, 16}, tg::kFloat32, gen);
    const tg::Tensor o = tg::scaled_dot_product_attention(qt, kt, kt, {}, true);
    const size_t qkvo = 4 * qt.numel() * 4, lse = 4 * static_cast<size_t>(t) * 4;
    fmt::print("T = {:>4}: saved {:>7} bytes = q, k, v, out {:>7} + logsumexp {:>5}; P: {:>8}\n", t,
               o.grad_fn()->saved_bytes(), qkvo, lse, 4 * t * t * 4);
  }

  // A query whose keys are all masked outputs zeros (and gets zero gradient), not NaN.
  const tg::Tensor keep = tg::tensor({true, false, false, false}, {2, 2});
  const tg::Tensor q1 = tg::ones({1, 1, 2, 2}), v1 = tg::tensor({1.f, 2.f, 3.f, 4.f}, {1, 1, 2, 2});
  fmt::print("row 1 fully masked: {}\n", tg::scaled_dot_product_attention(q1, q1, v1, keep));
}
