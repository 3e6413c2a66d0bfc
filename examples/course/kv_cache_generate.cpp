// file: examples/course/kv_cache_generate.cpp
// Chapter 22: generation with a KV cache. Which keys a chunk of new queries sees (the causal
// rule shifted by the cached positions, against the op's top-left causal flag); a small
// model's logits from the whole sequence at once and from the cache fed in chunks, compared
// bit for bit on the reference kernels; and tiny_lm sample's restart when the cache is full,
// step by step against the recompute of the last context_length ids.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

namespace nn = tg::nn;

/// Whether two tensors hold the same numbers, bit for bit (as float64, which holds any
/// float32 exactly).
bool same_bits(const tg::Tensor& a, const tg::Tensor& b) {
  return a.to(tg::kFloat64).to_vector<double>() == b.to(tg::kFloat64).to_vector<double>();
}

double largest_difference(const tg::Tensor& a, const tg::Tensor& b) {
  const std::vector<double> x = a.to(tg::kFloat64).to_vector<double>();
  const std::vector<double> y = b.to(tg::kFloat64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

/// The bool (rows, keys) mask of a rule: keep[i][j] says whether query i sees key j.
template <class Rule>
tg::Tensor mask_of(int64_t rows, int64_t keys, Rule sees) {
  tg::Tensor m = tg::empty({rows, keys}, tg::kBool);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < keys; ++j) m.data<bool>()[i * keys + j] = sees(i, j);
  }
  return m;
}

/// One line per query: 'x' for a key it sees, '.' for one it does not.
void print_mask(const std::string& title, const tg::Tensor& m, int64_t start) {
  fmt::print("{}\n", title);
  const int64_t rows = m.size(0), keys = m.size(1);
  for (int64_t i = 0; i < rows; ++i) {
    std::string line;
    for (int64_t j = 0; j < keys; ++j) line += m.data<bool>()[i * keys + j] ? " x" : " .";
    fmt::print("  query {} (position {}):{}\n", i, start + i, line);
  }
}

/// The ids from..to-1 as a (to - from) tensor.
tg::Tensor slice(const std::vector<int64_t>& ids, int64_t from, int64_t to) {
  return tg::tensor(std::vector<int64_t>(ids.begin() + from, ids.begin() + to), {to - from});
}

}  // namespace

int main() {
  // Every comparison "bit for bit" below runs on the reference kernels.
  const tg::KernelPath startup = tg::kernel_path();  // TAPEGRAD_KERNELS, fast by default
  tg::KernelPathGuard reference(tg::KernelPath::kReference);
  tg::NoGradGuard no_grad;
  tg::Generator gen(22);

  // 1. Which keys a new query sees: 3 new queries after 4 cached positions, 7 keys in all.
  const int64_t start = 4, T = 3, L = start + T;
  const tg::Tensor shifted = mask_of(T, L, [&](int64_t i, int64_t j) { return j <= start + i; });
  const tg::Tensor top_left = mask_of(T, L, [](int64_t i, int64_t j) { return j <= i; });
  print_mask("the keys each new query must see (j <= start + i):", shifted, start);
  print_mask("what causal = true gives the same call (j <= i, aligned top left):", top_left, start);
  // The same attention as part of all 7 positions: its rows 4, 5, 6 are what the chunk wants.
  const tg::Tensor q = tg::randn({1, 2, L, 4}, tg::kFloat32, gen);
  const tg::Tensor k = tg::randn({1, 2, L, 4}, tg::kFloat32, gen);
  const tg::Tensor v = tg::randn({1, 2, L, 4}, tg::kFloat32, gen);
  const tg::Tensor all_rows = tg::scaled_dot_product_attention(q, k, v, {}, /*causal=*/true);
  const tg::Tensor wanted = all_rows.narrow(2, start, T);
  const tg::Tensor chunk_q = q.narrow(2, start, T);
  fmt::print("rows 4..6 of causal attention over all 7 positions, bit for bit:\n");
  fmt::print("  the 3 new queries with the (3, 7) mask: {}\n",
             same_bits(tg::scaled_dot_product_attention(chunk_q, k, v, shifted, false), wanted));
  fmt::print("  the 3 new queries with causal = true:   {}\n",
             same_bits(tg::scaled_dot_product_attention(chunk_q, k, v, {}, true), wanted));
  fmt::print("  the last query alone, no mask at all:   {}\n",
             same_bits(tg::scaled_dot_product_attention(q.narrow(2, 6, 1), k, v, {}, false),
                       all_rows.narrow(2, 6, 1)));

  // 2. A small model: the whole sequence at once, then the cache fed in chunks.
  const nn::TransformerConfig config{.vocab_size = 13,
                                     .context_length = 12,
                                     .d_model = 16,
                                     .n_layers = 2,
                                     .n_heads = 4,
                                     .d_ff = 24,
                                     .rope = true};
  nn::TransformerLM model(config, gen);
  const std::vector<int64_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  const tg::Tensor full = model(slice(ids, 0, 10));  // (10, 13): one row per position
  nn::KVCache cache(config, 1);
  fmt::print("KV cache: {} layers, k and v of shape {} each, {} bytes\n", cache.layers.size(),
             cache.layers[0].k.shape(), cache.bytes());
  int64_t t = 0;
  for (const int64_t n : {4, 1, 1, 3, 1}) {
    const int64_t before = cache.length();
    const tg::Tensor logits = model(slice(ids, t, t + n), cache);
    const std::string rule = n == 1        ? "one query, every key"
                             : before == 0 ? "causal = true"
                                           : fmt::format("a ({}, {}) mask", n, before + n);
    fmt::print("{} new at positions {}..{}: length {:>2} -> {:>2}, {:<20} logits = full's: {}\n", n,
               t, t + n - 1, before, cache.length(), rule + ",",
               same_bits(logits, full.narrow(0, t, n)));
    t += n;
  }
  // On the startup kernel path (fast unless TAPEGRAD_KERNELS=reference), to a tolerance: the
  // blocked products may round a row computed alone differently from the same row among others.
  {
    tg::KernelPathGuard path(startup);
    const tg::Tensor again = model(slice(ids, 0, 10));
    nn::KVCache fresh(config, 1);
    std::vector<tg::Tensor> parts;
    for (int64_t i = 0; i < 10; ++i) parts.push_back(model(slice(ids, i, i + 1), fresh));
    fmt::print("token by token on the default kernel path: within 1e-5 of the whole: {}\n",
               largest_difference(tg::cat(parts, 0), again) < 1e-5);
  }

  // 3. tiny_lm sample's loop with a context of 8: the cache starts again from the last
  // ctx / 2 ids when it is full; the recompute always runs the last ctx ids.
  nn::TransformerConfig small = config;
  small.context_length = 8;
  nn::TransformerLM lm(small, gen);
  const int64_t ctx = small.context_length;
  const std::vector<int64_t> text = tg::randint(0, 13, {18}, tg::kInt64, gen).to_vector<int64_t>();
  nn::KVCache kv(small, 1);
  int64_t run_cached = 0, run_recomputed = 0;  // positions through the model
  std::string row_n, row_cache, row_recompute, row_same;
  for (int64_t n = 1; n <= 18; ++n) {  // n ids so far: the logits of id n
    tg::Tensor cached;
    if (kv.length() == 0 || kv.length() == kv.capacity()) {
      const int64_t keep = std::min(n, kv.length() == 0 ? ctx : ctx / 2);
      kv.clear();
      cached = lm(slice(text, n - keep, n), kv)[keep - 1];
      run_cached += keep;
    } else {
      cached = lm(slice(text, n - 1, n), kv)[0];
      run_cached += 1;
    }
    const int64_t w = std::min(n, ctx);
    const tg::Tensor recomputed = lm(slice(text, n - w, n))[w - 1];
    run_recomputed += w;
    row_n += fmt::format("{:>3}", n);
    row_cache += fmt::format("{:>3}", kv.length());
    row_recompute += fmt::format("{:>3}", w);
    row_same += same_bits(cached, recomputed) ? "  =" : "  x";
  }
  fmt::print("context 8: ids seen by the model, with the cache and by the recompute\n");
  fmt::print("  ids so far     {}\n  cache sees     {}\n  recompute sees {}\n", row_n, row_cache,
             row_recompute);
  fmt::print("  same logits    {}\n", row_same);
  fmt::print("positions run through the model: {} with the cache, {} recomputing\n", run_cached,
             run_recomputed);
}
