// tests/nn/kv_cache_test.cpp — generation with a KV cache (nn/transformer.h): the logits of
// a sequence fed one token (or one chunk) at a time against the cache equal those of the
// whole sequence at once, with and without RoPE, batched, after clear(), with grouped-query
// attention; its size; errors.
#include "nn/transformer.h"

#include "test_util.h"

namespace tg::nn {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using ::testing::Pointwise;

TransformerConfig cache_config(bool rope) {
  return {.vocab_size = 13,
          .context_length = 12,
          .d_model = 16,
          .n_layers = 2,
          .n_heads = 4,
          .d_ff = 24,
          .rope = rope};
}

/// The logits of ids (B, T) fed to the cache in chunks of the given lengths, concatenated
/// along time.
Tensor cached_logits(TransformerLM& model, KVCache& cache, const Tensor& ids,
                     const std::vector<int64_t>& chunks) {
  std::vector<Tensor> parts;
  int64_t t = 0;
  for (const int64_t n : chunks) {
    parts.push_back(model(ids.narrow(1, t, n), cache));
    t += n;
  }
  EXPECT_EQ(t, ids.size(1));
  return cat(parts, 1);
}

TEST(KVCacheTest, CachedLogitsAreTheFullRecomputesBitForBitOnTheReferencePath) {
  // On the reference kernels every output row is computed by the same loops from the same
  // numbers whether its sequence came at once or a token at a time (a linear row does not
  // depend on the other rows; a query's attention skips the keys after it either way), so the
  // logits agree exactly. A wrong RoPE position, a key missing from the cache or a stale
  // one all change them.
  KernelPathGuard path(KernelPath::kReference);
  for (const bool rope : {false, true}) {
    Generator gen(1);
    TransformerLM model(cache_config(rope), gen);
    const Tensor ids = randint(0, 13, {2, 10}, kInt64, gen);
    const Tensor full = model(ids).detach();
    NoGradGuard no_grad;
    for (const std::vector<int64_t>& chunks :
         {std::vector<int64_t>(10, 1), std::vector<int64_t>{4, 1, 1, 3, 1},
          std::vector<int64_t>{10}}) {
      KVCache cache(model.config, 2);
      const Tensor cached = cached_logits(model, cache, ids, chunks);
      EXPECT_EQ(cache.length(), 10);
      EXPECT_EQ(as_doubles(cached), as_doubles(full))
          << "rope " << rope << ", first chunk " << chunks[0];
    }
  }
}

TEST(KVCacheTest, GroupedQueryCachesOnlyTheKvHeads) {
  // n_kv_heads 2 and 1 of 4: the cache holds Hkv heads (a half and a quarter of the bytes),
  // and the cached logits are still the full recompute's, bit for bit on the reference path.
  KernelPathGuard path(KernelPath::kReference);
  for (const int64_t kv : {2, 1}) {
    TransformerConfig c = cache_config(true);
    c.n_kv_heads = kv;
    Generator gen(5);
    TransformerLM model(c, gen);
    const Tensor ids = randint(0, 13, {2, 9}, kInt64, gen);
    const Tensor full = model(ids).detach();
    NoGradGuard no_grad;
    KVCache cache(c, 2);
    EXPECT_EQ(cache.layers[0].k.shape(), (Shape{2, kv, 12, 4}));
    EXPECT_EQ(cache.bytes(), KVCache(cache_config(true), 2).bytes() / static_cast<size_t>(4 / kv));
    EXPECT_EQ(as_doubles(cached_logits(model, cache, ids, {3, 1, 1, 2, 1, 1})), as_doubles(full))
        << "n_kv_heads " << kv;
  }
}

TEST(KVCacheTest, CachedLogitsMatchOnTheFastPath) {
  // The fast kernels sum in an order that depends on the shapes (blocked GEMM), so a row
  // computed alone may differ from the same row among others by float32 rounding: logits of
  // size ~3 agree to a few ulps, 1e-5 leaves a margin of about 10.
  for (const bool rope : {false, true}) {
    Generator gen(2);
    TransformerLM model(cache_config(rope), gen);
    const Tensor ids = randint(0, 13, {3, 12}, kInt64, gen);
    const Tensor full = model(ids).detach();
    NoGradGuard no_grad;
    KVCache cache(model.config, 3);
    const Tensor cached = cached_logits(model, cache, ids, {5, 1, 1, 1, 2, 1, 1});
    EXPECT_THAT(as_doubles(cached), Pointwise(DoubleNear(1e-5), as_doubles(full)));
  }
}

TEST(KVCacheTest, UnbatchedIdsAndClearStartOver) {
  KernelPathGuard path(KernelPath::kReference);
  Generator gen(3);
  TransformerLM model(cache_config(true), gen);
  const Tensor ids = tensor(std::vector<int64_t>{3, 1, 4, 1, 5, 9, 2, 6});
  const Tensor full = model(ids).detach();
  NoGradGuard no_grad;
  KVCache cache(model.config, 1, 8);
  const Tensor first = model(ids.narrow(0, 0, 5), cache);
  EXPECT_EQ(first.shape(), (Shape{5, 13}));
  EXPECT_EQ(as_doubles(first), as_doubles(full.narrow(0, 0, 5)));
  // Another sequence after clear(): nothing of the first one is left in what it sees.
  cache.clear();
  EXPECT_EQ(cache.length(), 0);
  const Tensor other = tensor(std::vector<int64_t>{7, 7, 2});
  EXPECT_EQ(as_doubles(model(other, cache)), as_doubles(model(other)));
}

TEST(KVCacheTest, HoldsTwoTensorsPerLayerOfBatchHeadsCapacityHeadDim) {
  const TransformerConfig c = cache_config(false);
  const KVCache cache(c, 3, 10);
  ASSERT_EQ(cache.layers.size(), 2u);
  EXPECT_EQ(cache.layers[1].v.shape(), (Shape{3, 4, 10, 4}));
  // 2 (k and v) x 2 layers x 3 x 4 heads x 10 positions x 4 dims x 4 bytes
  EXPECT_EQ(cache.bytes(), 2u * 2 * 3 * 4 * 10 * 4 * 4);
  EXPECT_EQ(KVCache(c, 1).capacity(), 12);  // 0: the context length
  EXPECT_EQ(KVCache(c, 1, 5, kFloat64).bytes(), 2u * 2 * 4 * 5 * 4 * 8);
}

TEST(KVCacheTest, Errors) {
  Generator gen(4);
  TransformerLM model(cache_config(false), gen);
  KVCache cache(model.config, 1, 6);
  const Tensor ids = tensor(std::vector<int64_t>{1, 2, 3, 4});
  EXPECT_TG_THROW(model(ids, cache), MisuseError,
                  "TransformerLM: a KV cache is for generation: run it under tg::NoGradGuard");
  NoGradGuard no_grad;
  model(ids, cache);
  EXPECT_TG_THROW(model(ids.narrow(0, 0, 3), cache), ValueError,
                  "TransformerLM: 3 new tokens do not fit the KV cache (4 of 6 positions used)");
  EXPECT_EQ(cache.length(), 4);  // a refused call changes nothing
  EXPECT_TG_THROW(model(tensor(std::vector<int64_t>{1, 2}, {2, 1}), cache), ValueError,
                  "TransformerLM: ids (2, 1) has batch 2, the KV cache 1");
  EXPECT_TG_THROW(KVCache(model.config, 1, 13), ValueError,
                  "KVCache: batch 1 and capacity 13 must be >= 1, and the capacity at most the "
                  "context length 12");
  EXPECT_TG_THROW(KVCache(model.config, 0), ValueError, "batch 0");
  EXPECT_TG_THROW(KVCache(model.config, 1, 4, kInt64), DTypeError,
                  "KVCache: dtype must be floating, got int64");
  TransformerConfig three = model.config;
  three.n_layers = 3;
  KVCache deeper(three, 1);
  EXPECT_TG_THROW(model(ids, deeper), ValueError,
                  "TransformerLM: the KV cache has 3 layers, the model 2");
}

}  // namespace
}  // namespace tg::nn
