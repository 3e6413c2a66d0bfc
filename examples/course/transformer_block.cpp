// file: examples/course/transformer_block.cpp
// Chapter 16: one pre-norm TransformerBlock. Its parameter tree and count; its forward redone
// line by line from the block's own weights, with the shape after every line; the block
// against that composition; and causality: changing token 3 leaves outputs 0..2 unchanged.
#include <fmt/format.h>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

double max_diff(const tg::Tensor& a, const tg::Tensor& b) {
  return tg::amax(tg::abs(tg::sub(a, b))).item<float>();
}

}  // namespace

int main() {
  tg::Generator gen(16);
  const tg::nn::TransformerConfig config{.d_model = 8, .n_heads = 2, .d_ff = 16, .rope = true};
  tg::nn::TransformerBlock block(config, gen);
  fmt::print("{}\n", block);
  for (const auto& [name, p] : block.named_parameters()) {
    fmt::print("  {:<18} {:>8} = {:>3}\n", name, fmt::format("{}", p.shape()), p.numel());
  }
  fmt::print("parameters: {}\n\n", block.num_parameters());

  const int64_t B = 2, T = 5, C = 8, H = 2, D = C / H;
  tg::NoGradGuard no_grad;
  const tg::Tensor x = tg::randn({B, T, C}, tg::kFloat32, gen);
  auto show = [](const char* what, const tg::Tensor& t) {
    fmt::print("{:<48} {:<13} {}\n", what, fmt::format("{}", t.shape()),
               t.is_contiguous() ? "contiguous" : "strided");
  };
  show("x", x);
  const tg::Tensor fused = block.attn.qkv(block.attn_norm(x));
  show("fused = qkv(attn_norm(x))", fused);
  const tg::Tensor q3 = fused.narrow(2, 0, C);
  show("q3 = fused.narrow(2, 0, C)", q3);
  const tg::Tensor q4 = q3.reshape({B, T, H, D});
  show("q4 = q3.reshape({B, T, H, D})", q4);
  auto heads = [&](int64_t i) {
    return fused.narrow(2, i * C, C).reshape({B, T, H, D}).transpose(1, 2);
  };
  const tg::Tensor positions = tg::arange(static_cast<double>(T), tg::kInt64);
  const tg::Tensor qh = q4.transpose(1, 2);
  show("qh = q4.transpose(1, 2)", qh);
  const tg::Tensor q = tg::rope(qh, positions), k = tg::rope(heads(1), positions);
  const tg::Tensor v = heads(2);
  show("q = rope(qh, positions)", q);
  const tg::Tensor att = tg::scaled_dot_product_attention(q, k, v, {}, /*causal=*/true);
  show("att = scaled_dot_product_attention(q, k, v)", att);
  const tg::Tensor merged = att.transpose(1, 2).reshape({B, T, C});
  show("merged = att.transpose(1, 2).reshape({B, T, C})", merged);
  const tg::Tensor attn_out = block.attn.proj(merged);
  show("attn_out = proj(merged)", attn_out);
  const tg::AddRmsNormOutput r = block.ffn_norm.add_forward(x, attn_out);
  show("r.residual = x + attn_out", r.residual);
  show("r.out = rms_norm(r.residual, ffn_norm.weight)", r.out);
  const tg::Tensor y = tg::add(r.residual, block.ffn(r.out));
  show("y = r.residual + ffn(r.out)", y);
  fmt::print("block(x) vs the lines above: largest difference {}\n\n", max_diff(block(x), y));

  // Causality: change every channel of token 3 in batch 0 and compare the outputs.
  tg::Tensor x2 = x.clone();
  for (int64_t c = 0; c < C; ++c) x2.data<float>()[3 * C + c] += 1.0f;
  const tg::Tensor y1 = block(x), y2 = block(x2);
  for (int64_t t = 0; t < T; ++t) {
    fmt::print("token {}: output changed by {:.4f}\n", t, max_diff(y1[0][t], y2[0][t]));
  }
}
