// file: examples/course/recompute_memory.cpp
// Chapter 23: what activation checkpointing saves and what it costs. The bytes a training step
// keeps on the tape, plainly and with every block recomputed, by chapter 18's table and as
// measure_step counts them, for a small model at several depths; the same for the model of
// tapegrad-bench lm, with the FLOPs of the extra forward; and checkpoints every k blocks of a
// deep stack, Chen et al.'s sqrt(L) among them.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

namespace nn = tg::nn;

/// The tape of one training step (the model on B x T ids, then cross_entropy), float32, no
/// RoPE, by chapter 18's table, in four parts.
struct TapeBytes {
  int64_t outside = 0;      // the ids, the final norm, the head and the loss
  int64_t activations = 0;  // what one plain block's ops keep of its tokens
  int64_t weights = 0;      // one block's weights, which its ops save too
  int64_t input = 0;        // one block's input: all a recomputed block keeps
};

TapeBytes tape_bytes(const nn::TransformerConfig& c, int64_t B, int64_t T) {
  const int64_t N = B * T, C = c.d_model, F = c.d_ff, H = c.n_heads, V = c.vocab_size;
  TapeBytes t;
  t.outside = 8 * N                                   // embedding: the ids, int64
              + 4 * (N * C + C + N)                   // rms_norm: x, its weight, one rstd a row
              + 4 * (N * C + V * C)                   // the head's linear: x and its weight
              + 4 * N * V + 8 * N + 4 * N;            // cross_entropy: logits, targets, lse
  t.activations = N * (40 * C + 12 * F + 4 * H + 8);  // per token: chapter 18
  t.weights = 4 * (4 * C * C + 3 * C * F + 2 * C);    // qkv, proj, w1, w3, w2, two norms
  t.input = 4 * N * C;                                // (B, T, C) float32
  return t;
}

int64_t plain_bytes(const TapeBytes& t, int64_t layers) {
  return t.outside + layers * (t.activations + t.weights);
}

int64_t recompute_bytes(const TapeBytes& t, int64_t layers) { return t.outside + layers * t.input; }

/// What measure_step counts for that step on a real model.
int64_t measured(const nn::TransformerConfig& c, int64_t B, int64_t T, bool recompute) {
  tg::Generator gen(23);
  nn::TransformerLM model(c, gen);
  model.set_recompute_blocks(recompute);
  const tg::Tensor ids = tg::randint(0, c.vocab_size, {B, T + 1}, tg::kInt64, gen);
  const tg::Tensor logits = model(ids.narrow(1, 0, T)).reshape({B * T, c.vocab_size});
  const tg::Tensor loss = tg::cross_entropy(logits, ids.narrow(1, 1, T).reshape({B * T}));
  return nn::measure_step(loss).saved_bytes;
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

int main() {
  // 1. A small model at four depths: the formulas against the tape.
  nn::TransformerConfig small{.vocab_size = 13,
                              .context_length = 8,
                              .d_model = 16,
                              .n_layers = 1,
                              .n_heads = 4,
                              .d_ff = 24};
  const TapeBytes s = tape_bytes(small, 3, 8);
  fmt::print("saved bytes of a training step, V 13, C 16, H 4, F 24, B 3, T 8, float32:\n");
  fmt::print("{:>6} {:>9} {:>13} {:>10} {:>13}\n", "blocks", "plain", "measure_step", "recompute",
             "measure_step");
  for (const int64_t layers : {1, 2, 4, 8}) {
    small.n_layers = layers;
    fmt::print("{:>6} {:>9} {:>13} {:>10} {:>13}\n", layers, plain_bytes(s, layers),
               measured(small, 3, 8, false), recompute_bytes(s, layers),
               measured(small, 3, 8, true));
  }
  fmt::print("a block adds {} bytes plainly ({} of activations, {} of weights), {} recomputed\n",
             s.activations + s.weights, s.activations, s.weights, s.input);

  // 2. tapegrad-bench lm's model: 4 blocks, C 128 = 4 heads of 32, F 384, V 128, no RoPE,
  // batch 16 x 128 tokens.
  const nn::TransformerConfig bench{.vocab_size = 128,
                                    .context_length = 128,
                                    .d_model = 128,
                                    .n_layers = 4,
                                    .n_heads = 4,
                                    .d_ff = 384};
  const int64_t B = 16, T = 128, N = B * T, L = 4, C = 128, F = 384, V = 128;
  const TapeBytes b = tape_bytes(bench, B, T);
  const nn::StepCost paper = nn::estimate_step(bench, B, T);
  fmt::print("tapegrad-bench lm's model (4 blocks, C 128, H 4, F 384, V 128), B 16, T 128:\n");
  fmt::print("  plain      {:>9} bytes {:>6.2f} MiB  (estimate_step: {})\n", plain_bytes(b, L),
             mib(plain_bytes(b, L)), paper.saved_bytes);
  fmt::print("  recompute  {:>9} bytes {:>6.2f} MiB\n", recompute_bytes(b, L),
             mib(recompute_bytes(b, L)));
  fmt::print("  {:.1f} times less; one block's activations, rebuilt in the backward: {} bytes\n",
             static_cast<double>(plain_bytes(b, L)) / static_cast<double>(recompute_bytes(b, L)),
             b.activations);
  // Chapter 18's FLOPs: 2 per weight of a matrix product and token, 4 T C per token and block
  // for attention (dense); a backward costs 2 forwards for the linear layers, 2.5 for attention.
  const int64_t linear_blocks = 2 * N * L * (4 * C * C + 3 * C * F);
  const int64_t attention = 4 * L * B * T * T * C;
  const int64_t head = 2 * N * C * V;
  const int64_t blocks = linear_blocks + attention;
  const int64_t step = 3 * (linear_blocks + head) + attention * 7 / 2;
  fmt::print("  forward FLOPs: blocks {}, head {}, in all {} (estimate_step: {})\n", blocks, head,
             blocks + head, paper.forward_flops);
  fmt::print("  a step, forward and backward: {} FLOPs; with the blocks' forward again: {}\n", step,
             step + blocks);
  fmt::print("  recompute / plain: {:.2f} times the FLOPs\n",
             static_cast<double>(step + blocks) / static_cast<double>(step));

  // 3. A deep stack of such blocks, per token, at the worst moment of the backward: the inputs
  // of the checkpointed segments, ceil(L / k) of them, and one segment of k blocks rebuilt.
  const int64_t input = b.input / N, block = b.activations / N;
  fmt::print("a stack of L blocks, bytes per token: checkpoints every k blocks keep ceil(L / k)\n");
  fmt::print("inputs of {} bytes and rebuild k blocks of {} bytes at a time\n", input, block);
  auto kept = [&](int64_t layers, int64_t k) { return (layers + k - 1) / k * input + k * block; };
  fmt::print("{:>5} {:>9} {:>9} {:>16} {:>12}\n", "L", "none", "k = 1", "k = sqrt(L)",
             "the best k");
  for (const int64_t layers : {4, 16, 64, 256}) {
    const auto root = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(layers))));
    int64_t best = 1;
    for (int64_t k = 2; k <= layers; ++k) {
      if (kept(layers, k) < kept(layers, best)) best = k;
    }
    fmt::print("{:>5} {:>9} {:>9} {:>9} (k {:>2}) {:>7} (k {})\n", layers, layers * block,
               kept(layers, 1), kept(layers, root), root, kept(layers, best), best);
  }
}
