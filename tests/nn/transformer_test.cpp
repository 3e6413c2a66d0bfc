// tests/nn/transformer_test.cpp — the Transformer modules: parameter names (the PyTorch
// interop contract), shapes, causality, the fused block against its plain composition,
// gradients reaching every parameter, the config's JSON, and the errors.
#include "nn/transformer.h"

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace tg::nn {
namespace {

using testing::as_doubles;
using ::testing::ElementsAre;

TransformerConfig tiny_config() {
  return {
      .vocab_size = 11, .context_length = 8, .d_model = 8, .n_layers = 2, .n_heads = 2, .d_ff = 12};
}

std::vector<std::string> names_of(const Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.push_back(name);
  return names;
}

TEST(TransformerTest, ParameterNamesMatchThePyTorchTwin) {
  Generator gen(0);
  const TransformerLM model(tiny_config(), gen);
  EXPECT_THAT(
      names_of(model),
      ElementsAre("tok_emb.weight", "blocks.0.attn_norm.weight", "blocks.0.attn.qkv.weight",
                  "blocks.0.attn.proj.weight", "blocks.0.ffn_norm.weight", "blocks.0.ffn.w1.weight",
                  "blocks.0.ffn.w3.weight", "blocks.0.ffn.w2.weight", "blocks.1.attn_norm.weight",
                  "blocks.1.attn.qkv.weight", "blocks.1.attn.proj.weight",
                  "blocks.1.ffn_norm.weight", "blocks.1.ffn.w1.weight", "blocks.1.ffn.w3.weight",
                  "blocks.1.ffn.w2.weight", "norm.weight", "head.weight"));
  // V*C + L*(C + 3C*C + C*C + C + 3*F*C) + C + V*C
  const int64_t V = 11, C = 8, F = 12, L = 2;
  EXPECT_EQ(model.num_parameters(), V * C + L * (2 * C + 4 * C * C + 3 * F * C) + C + V * C);
  EXPECT_EQ(model.blocks[0].attn.qkv.weight.shape(), (Shape{3 * C, C}));
  EXPECT_EQ(model.blocks[1].ffn.w2.weight.shape(), (Shape{C, F}));
}

TEST(TransformerTest, LogitsHaveOneRowPerToken) {
  Generator gen(1);
  TransformerLM model(tiny_config(), gen);
  const Tensor ids = randint(0, 11, {3, 5}, kInt64, gen);
  EXPECT_EQ(model(ids).shape(), (Shape{3, 5, 11}));
  // An unbatched sequence gives the same logits as a batch of one.
  const Tensor one = model(ids[1]);
  EXPECT_EQ(one.shape(), (Shape{5, 11}));
  EXPECT_EQ(as_doubles(one), as_doubles(model(ids)[1]));
}

TEST(TransformerTest, TheFutureDoesNotChangeThePast) {
  for (bool rope : {false, true}) {
    Generator gen(2);
    TransformerConfig c = tiny_config();
    c.rope = rope;
    TransformerLM model(c, gen);
    const Tensor a = tensor(std::vector<int64_t>{1, 2, 3, 4, 5, 6});
    const Tensor b = tensor(std::vector<int64_t>{1, 2, 3, 9, 9, 9});
    const Tensor la = model(a), lb = model(b);
    // Positions 0..2 saw the same prefix, so their logits agree; position 3 differs.
    EXPECT_EQ(as_doubles(la.narrow(0, 0, 3)), as_doubles(lb.narrow(0, 0, 3))) << rope;
    EXPECT_NE(as_doubles(la.narrow(0, 3, 1)), as_doubles(lb.narrow(0, 3, 1))) << rope;
  }
}

TEST(TransformerTest, RopeMakesPositionsMatter) {
  // Without positions, attention over identical tokens is position-blind: a sequence of one
  // repeated token gives the same logits everywhere. RoPE breaks that symmetry.
  const Tensor same = tensor(std::vector<int64_t>{4, 4, 4, 4});
  for (bool rope : {false, true}) {
    Generator gen(3);
    TransformerConfig c = tiny_config();
    c.rope = rope;
    TransformerLM model(c, gen);
    const Tensor logits = model(same);
    const bool equal = as_doubles(logits[0]) == as_doubles(logits[3]);
    EXPECT_EQ(equal, !rope) << "rope=" << rope;
  }
}

/// The block written without the fused add-norm and without the fused attention, from
/// primitives only: what TransformerBlock::forward must equal.
Tensor plain_block(TransformerBlock& blk, const Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = blk.attn.n_heads, D = C / H;
  auto rms = [](const Tensor& t, const Tensor& w, double eps) {
    return t * rsqrt(mean(t * t, {-1}, true) + eps) * w;
  };
  const Tensor h1 = rms(x, blk.attn_norm.weight, blk.attn_norm.eps);
  const Tensor qkv = matmul(h1, blk.attn.qkv.weight.t());
  auto heads = [&](int64_t i) {
    return qkv.narrow(2, i * C, C).reshape({B, T, H, D}).transpose(1, 2);
  };
  const Tensor q = heads(0), k = heads(1), v = heads(2);
  Tensor scores = matmul(q, k.transpose(-2, -1)) / std::sqrt(double(D));
  Tensor future = zeros({T, T}, kBool);
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = i + 1; j < T; ++j) future.data<bool>()[i * T + j] = true;
  }
  scores = masked_fill(scores, future, -INFINITY);
  const Tensor e = exp(scores - amax(scores, {-1}, true));
  const Tensor p = e / sum(e, {-1}, true);
  const Tensor att = matmul(p, v).transpose(1, 2).reshape({B, T, C});
  const Tensor r = x + matmul(att, blk.attn.proj.weight.t());
  const Tensor h2 = rms(r, blk.ffn_norm.weight, blk.ffn_norm.eps);
  const Tensor a = matmul(h2, blk.ffn.w1.weight.t()), g = matmul(h2, blk.ffn.w3.weight.t());
  return r + matmul(a * sigmoid(a) * g, blk.ffn.w2.weight.t());
}

TEST(TransformerTest, BlockEqualsItsPlainComposition) {
  Generator gen(4);
  TransformerBlock block(tiny_config(), gen);
  const Tensor x = randn({2, 5, 8}, kFloat32, gen).requires_grad_();
  const Tensor fused = block(x), plain = plain_block(block, x);
  const auto a = as_doubles(fused), b = as_doubles(plain);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
  // And the same gradients for x and for a weight deep inside.
  const Tensor g = randn({2, 5, 8}, kFloat32, gen);
  const auto gf = grad({fused}, {x, block.attn.qkv.weight}, {g});
  const auto gp = grad({plain}, {x, block.attn.qkv.weight}, {g});
  for (size_t k = 0; k < 2; ++k) {
    const auto u = as_doubles(gf[k]), w = as_doubles(gp[k]);
    for (size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(u[i], w[i], 1e-4) << k << " " << i;
  }
}

TEST(TransformerTest, EveryParameterGetsAGradient) {
  Generator gen(5);
  TransformerLM model(tiny_config(), gen);
  const Tensor ids = randint(0, 11, {2, 8}, kInt64, gen);
  const Tensor targets = randint(0, 11, {2, 8}, kInt64, gen);
  cross_entropy(model(ids), targets).backward();
  for (const auto& [name, p] : model.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    double norm = 0;
    for (double v : as_doubles(p.grad())) norm += v * v;
    EXPECT_GT(norm, 0) << name;
  }
}

TEST(TransformerTest, TheConfigCountsTheParametersWithoutBuildingTheModel) {
  for (const bool rope : {false, true}) {
    TransformerConfig c = tiny_config();
    c.rope = rope;
    c.n_layers = 3;
    c.d_ff = 12;
    EXPECT_EQ(c.num_parameters(), TransformerLM(c).num_parameters());
  }
  TransformerConfig huge = tiny_config();
  huge.n_layers = int64_t{1} << 62;
  EXPECT_EQ(huge.num_parameters(), INT64_MAX);  // saturates, no overflow
}

TEST(TransformerTest, GroupedQueryAttentionNarrowsKeysAndValues) {
  // n_kv_heads = 1 (multi-query) and 2 of 4 heads: qkv makes C + 2 Hkv D outputs, the
  // parameter count follows, and the model equals one whose kv heads are repeated: the same
  // weights with each kv head's rows of qkv copied for every query head of its group.
  for (const int64_t kv : {1, 2}) {
    TransformerConfig c = tiny_config();
    c.d_model = 16;
    c.n_heads = 4;
    c.n_kv_heads = kv;
    c.rope = true;
    Generator gen(8);
    TransformerLM gqa(c, gen);
    const int64_t C = 16, D = 4, group = 4 / kv;
    EXPECT_EQ(gqa.blocks[0].attn.qkv.weight.shape(), (Shape{C + 2 * kv * D, C}));
    EXPECT_EQ(c.num_parameters(), gqa.num_parameters());
    TransformerConfig full = c;
    full.n_kv_heads = 0;
    TransformerLM mha(full, gen);
    for (size_t l = 0; l < gqa.blocks.size(); ++l) {
      // Rows of W_qkv: q (C), then k heads, then v heads, D rows each.
      const Tensor w = gqa.blocks[l].attn.qkv.weight.detach();
      std::vector<Tensor> rows = {w.narrow(0, 0, C)};
      for (const int64_t part : {0, 1}) {
        for (int64_t h = 0; h < 4; ++h)
          rows.push_back(w.narrow(0, C + (part * kv + h / group) * D, D));
      }
      mha.blocks[l].attn.qkv.weight.detach().copy_(cat(rows, 0));
    }
    auto state = gqa.state_dict();
    for (auto& [name, t] : mha.named_parameters()) {
      if (name.find("qkv") == std::string::npos) t.detach().copy_(state.at(name));
    }
    const Tensor ids = randint(0, 11, {2, 7}, kInt64, gen);
    EXPECT_THAT(as_doubles(gqa(ids)),
                ::testing::Pointwise(::testing::DoubleNear(1e-5), as_doubles(mha(ids))))
        << "n_kv_heads " << kv;
  }
  TransformerConfig bad = tiny_config();
  bad.n_kv_heads = 3;
  EXPECT_TG_THROW(bad.validate(), ValueError, "n_kv_heads 3 must divide n_heads 2");
  bad.n_kv_heads = -1;
  EXPECT_TG_THROW(bad.validate(), ValueError, "n_kv_heads -1");
}

TEST(TransformerTest, ConfigRoundTripsThroughJson) {
  TransformerConfig c = tiny_config();
  c.rope = true;
  c.norm_eps = 1e-6;
  const TransformerConfig back = TransformerConfig::from_json(c.to_json());
  EXPECT_EQ(back.to_json(), c.to_json());
  EXPECT_EQ(back.n_heads, 2);
  EXPECT_TRUE(back.rope);
  EXPECT_TG_THROW(TransformerConfig::from_json("{\"vocab_size\": 3}"), ValueError, "from_json",
                  "context_length");
  EXPECT_TG_THROW(TransformerConfig::from_json("not json"), ValueError, "from_json");
  // n_kv_heads travels too; a config written before it existed reads as n_kv_heads = 0.
  c.n_kv_heads = 1;
  EXPECT_EQ(TransformerConfig::from_json(c.to_json()).n_kv_heads, 1);
  nlohmann::json old = nlohmann::json::parse(c.to_json());
  old.erase("n_kv_heads");
  EXPECT_EQ(TransformerConfig::from_json(old.dump()).n_kv_heads, 0);
}

TEST(TransformerTest, BadConfigsAndInputsAreErrors) {
  TransformerConfig c = tiny_config();
  c.n_heads = 3;
  EXPECT_TG_THROW(TransformerLM{c}, ValueError, "d_model 8", "n_heads 3");
  c = tiny_config();
  c.d_model = 6;  // two heads of 3 channels: RoPE rotates pairs, 3 is odd
  c.rope = true;
  EXPECT_TG_THROW(TransformerLM{c}, ValueError, "rope", "even head dim", "3");
  c = tiny_config();
  c.d_ff = 0;
  EXPECT_TG_THROW(TransformerLM{c}, ValueError, "d_ff", "0");

  // A config from a checkpoint is checked before anything is allocated: 10^8 layers, or a
  // width beyond 2^24, is an error naming the sizes, not an attempt to allocate terabytes.
  c = tiny_config();
  c.n_layers = 100'000'000;
  EXPECT_TG_THROW(TransformerConfig::from_json(c.to_json()), ValueError, "n_layers 100000000",
                  "2^24");
  c = tiny_config();
  c.d_model = 4096;
  c.n_layers = 1000;
  EXPECT_TG_THROW(TransformerConfig::from_json(c.to_json()), ValueError, "d_model 4096",
                  "n_layers 1000", "6.73e+10 parameters", "limit is 2^28");
  c = tiny_config();
  c.d_ff = int64_t{1} << 40;
  EXPECT_TG_THROW(c.validate(), ValueError, "d_ff 1099511627776", "2^24");

  Generator gen(6);
  TransformerLM model(tiny_config(), gen);
  EXPECT_TG_THROW(model(zeros({9}, kInt64)), ShapeError, "TransformerLM", "9 tokens",
                  "context length 8");
  EXPECT_TG_THROW(model(zeros({1, 2, 3}, kInt64)), ShapeError, "TransformerLM", "(1, 2, 3)");
  EXPECT_TG_THROW(model.blocks[0].attn(zeros({2, 3, 5})), ShapeError, "CausalSelfAttention",
                  "(2, 3, 5)");
}

TEST(TransformerTest, PrintsAsATree) {
  Generator gen(7);
  const TransformerLM model(tiny_config(), gen);
  const std::string text = model.to_string();
  // A module with children prints its extra_repr on a line of its own, as PyTorch does.
  EXPECT_THAT(text, ::testing::HasSubstr("      (attn): CausalSelfAttention(\n"
                                         "        n_heads=2, rope=False\n"
                                         "        (qkv): Linear(in_features=8, out_features=24"));
  EXPECT_THAT(text,
              ::testing::HasSubstr("(w1): Linear(in_features=8, out_features=12, bias=False)"));
}

}  // namespace
}  // namespace tg::nn
