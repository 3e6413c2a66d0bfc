// file: examples/course/kv_cache_cost.cpp
// Chapter 22: what a KV cache costs and what it saves. Its bytes, 2 (k and v) x layers x batch
// x kv heads x positions x head dim x bytes per number, checked against KVCache::bytes() for
// the tiny LM and the bench's model (with grouped-query attention too), then worked out for a
// 7B-class model next to its weights, with 32 kv heads and with 8; and the work of generating a
// whole context one token at a time, with the cache and recomputing.
#include <fmt/format.h>

#include <cstdint>

#include "core/core.h"
#include "nn/nn.h"

namespace {

namespace nn = tg::nn;

/// k and v, for every layer, sequence, head, position and channel of a head.
int64_t cache_bytes(int64_t layers, int64_t batch, int64_t heads, int64_t positions,
                    int64_t head_dim, int64_t bytes_per_number) {
  return 2 * layers * batch * heads * positions * head_dim * bytes_per_number;
}

double gib(int64_t bytes) { return static_cast<double>(bytes) / (int64_t{1} << 30); }
double gb(int64_t bytes) { return static_cast<double>(bytes) / 1e9; }

void check(const char* what, const nn::TransformerConfig& c, tg::DType dtype, int64_t by_hand) {
  const nn::KVCache cache(c, 1, 0, dtype);
  fmt::print("  {:<32} {:>8} {:>17}\n", what, by_hand, cache.bytes());
}

/// Positions run through the model and query-key pairs scored, in all.
struct Work {
  int64_t positions = 0, pairs = 0;
};

}  // namespace

int main() {
  fmt::print(
      "cache bytes = 2 x layers x batch x heads x positions x head dim x bytes per number\n");
  const nn::TransformerConfig tiny_lm{.vocab_size = 70,
                                      .context_length = 32,
                                      .d_model = 64,
                                      .n_layers = 3,
                                      .n_heads = 4,
                                      .d_ff = 192,
                                      .rope = true};
  // The defaults: 4 layers, d_model 128 = 4 heads of 32, context 128 (tapegrad-bench's model).
  nn::TransformerConfig defaults;
  fmt::print("batch 1, bytes:                    by hand  KVCache::bytes()\n");
  check("tiny_lm's model, T 32, f32", tiny_lm, tg::kFloat32, cache_bytes(3, 1, 4, 32, 16, 4));
  check("TransformerConfig{}, T 128, f32", defaults, tg::kFloat32,
        cache_bytes(4, 1, 4, 128, 32, 4));
  check("TransformerConfig{}, T 128, bf16", defaults, tg::kBFloat16,
        cache_bytes(4, 1, 4, 128, 32, 2));
  defaults.context_length = 512;
  check("TransformerConfig{}, T 512, f32", defaults, tg::kFloat32,
        cache_bytes(4, 1, 4, 512, 32, 4));
  // Grouped-query attention: 2 kv heads, each shared by 2 of the 4 query heads.
  nn::TransformerConfig grouped = defaults;
  grouped.n_kv_heads = 2;
  check("the same with n_kv_heads 2", grouped, tg::kFloat32, cache_bytes(4, 1, 2, 512, 32, 4));
  fmt::print(
      "TransformerConfig{{}}: {} bytes per token in f32; the weights: {} parameters, {} bytes\n",
      cache_bytes(4, 1, 4, 1, 32, 4), defaults.num_parameters(), 4 * defaults.num_parameters());

  // A 7B-class model: d_model 4096 = 32 heads of 128, 32 layers, d_ff 11008, 32000 tokens.
  // Too large to build here (and above TransformerConfig's limit): the arithmetic alone.
  const nn::TransformerConfig big{.vocab_size = 32000,
                                  .context_length = 4096,
                                  .d_model = 4096,
                                  .n_layers = 32,
                                  .n_heads = 32,
                                  .d_ff = 11008};
  const int64_t per_token = cache_bytes(32, 1, 32, 1, 128, 2);
  const int64_t one = cache_bytes(32, 1, 32, 4096, 128, 2);
  const int64_t eight = cache_bytes(32, 8, 32, 4096, 128, 2);
  const int64_t weights = 2 * big.num_parameters();
  fmt::print("7B-class, 32 layers x 32 heads of 128, bf16:\n");
  fmt::print("  per token          {:>12} bytes ({} KiB)\n", per_token, per_token / 1024);
  fmt::print("  4096 tokens        {:>12} bytes ({:.2f} GiB, {:.2f} GB)\n", one, gib(one), gb(one));
  fmt::print("  4096 tokens x 8    {:>12} bytes ({:.2f} GiB, {:.2f} GB)\n", eight, gib(eight),
             gb(eight));
  fmt::print("  the weights        {:>12} bytes ({:.2f} GiB): {} parameters in bf16\n", weights,
             gib(weights), big.num_parameters());
  // The same model with 8 kv heads, each shared by 4 of the 32 query heads: the cache keeps
  // the kv heads only, and qkv makes C + 2 x 8 x 128 outputs instead of 3 C.
  nn::TransformerConfig big_grouped = big;
  big_grouped.n_kv_heads = 8;
  const int64_t grouped_token = cache_bytes(32, 1, 8, 1, 128, 2);
  const int64_t grouped_eight = cache_bytes(32, 8, 8, 4096, 128, 2);
  const int64_t grouped_weights = 2 * big_grouped.num_parameters();
  fmt::print("the same with 8 kv heads of 128 (grouped-query attention, groups of 4):\n");
  fmt::print("  per token          {:>12} bytes ({} KiB), {} times less\n", grouped_token,
             grouped_token / 1024, per_token / grouped_token);
  fmt::print("  4096 tokens x 8    {:>12} bytes ({:.2f} GiB, {:.2f} GB)\n", grouped_eight,
             gib(grouped_eight), gb(grouped_eight));
  fmt::print("  the weights        {:>12} bytes ({:.2f} GiB): {} parameters in bf16\n",
             grouped_weights, gib(grouped_weights), big_grouped.num_parameters());

  // tapegrad-bench sample: from a one-token prompt to a full context, one token at a time, on
  // the default config (C 128, F 384, V 128, 4 layers).
  // Per position the linear layers cost 2 FLOPs per matrix weight; per query-key pair and layer
  // attention costs 4 C (a dot product of D and a D-wide multiply-add, for each of H heads).
  const int64_t C = 128, F = 384, V = 128, layers = 4;
  const int64_t matrix_weights = layers * (4 * C * C + 3 * C * F) + C * V;
  fmt::print("tapegrad-bench sample, TransformerConfig{{}}: {} matrix weights\n", matrix_weights);
  fmt::print("  FLOPs: {} per position, {} per query-key pair\n", 2 * matrix_weights,
             4 * C * layers);
  for (const int64_t T : {128, 512}) {
    Work cached, recomputed;
    for (int64_t s = 1; s < T; ++s) {  // step s: the prefix holds s tokens, position s - 1 is new
      cached.positions += 1;
      cached.pairs += s;  // the new query sees s keys
      recomputed.positions += s;
      recomputed.pairs += s * (s + 1) / 2;  // query p sees p + 1 keys, p = 0 .. s - 1
    }
    auto flops = [&](const Work& w) {
      return 2 * matrix_weights * w.positions + 4 * C * layers * w.pairs;
    };
    fmt::print("context {}, {} new tokens:\n", T, T - 1);
    fmt::print("  {:<10} {:>10} {:>12} {:>9}\n", "", "positions", "pairs", "GFLOP");
    fmt::print("  {:<10} {:>10} {:>12} {:>9.3f}\n", "cache", cached.positions, cached.pairs,
               static_cast<double>(flops(cached)) / 1e9);
    fmt::print("  {:<10} {:>10} {:>12} {:>9.3f}\n", "recompute", recomputed.positions,
               recomputed.pairs, static_cast<double>(flops(recomputed)) / 1e9);
    fmt::print("  recompute / cache: {:.1f} times the FLOPs\n",
               static_cast<double>(flops(recomputed)) / static_cast<double>(flops(cached)));
  }
}
