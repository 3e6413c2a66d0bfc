// tests/nn/recompute_test.cpp — activation checkpointing (nn/recompute.h): the gradients of a
// model whose blocks recompute are the plain model's bit for bit, the tape keeps only the
// blocks' inputs, a dropout inside replays its mask, autocast is replayed, and what asks for
// no gradient gets none.
#include "nn/recompute.h"

#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn {
namespace {

using testing::as_doubles;

TransformerConfig small(bool rope, int64_t layers = 2) {
  return {.vocab_size = 13,
          .context_length = 8,
          .d_model = 16,
          .n_layers = layers,
          .n_heads = 4,
          .d_ff = 24,
          .rope = rope};
}

/// The loss and every parameter's gradient after one backward of a fresh model (seed 1).
std::vector<std::vector<double>> loss_and_grads(const TransformerConfig& c, bool recompute) {
  Generator gen(1);
  TransformerLM model(c, gen);
  model.set_recompute_blocks(recompute);
  const Tensor ids = randint(0, 13, {3, 9}, kInt64, gen);
  const Tensor loss = cross_entropy(model(ids.narrow(1, 0, 8)).reshape({24, 13}),
                                    ids.narrow(1, 1, 8).reshape({24}));
  loss.backward();
  std::vector<std::vector<double>> out = {as_doubles(loss)};
  for (const Tensor& p : model.parameters()) out.push_back(as_doubles(p.grad()));
  return out;
}

TEST(RecomputeTest, GradientsAreThePlainModelsBitForBit) {
  // The second run of a block computes the same numbers in the same order as the first, and
  // its backward is the same ops' backward: nothing may differ, on either kernel path (this
  // test runs on both).
  for (const bool rope : {false, true}) {
    const auto plain = loss_and_grads(small(rope), false);
    const auto recomputed = loss_and_grads(small(rope), true);
    ASSERT_EQ(plain.size(), recomputed.size());
    for (size_t i = 0; i < plain.size(); ++i) {
      EXPECT_EQ(plain[i], recomputed[i]) << "rope " << rope << ", entry " << i;
    }
  }
}

TEST(RecomputeTest, TheTapeKeepsOnlyEachBlocksInput) {
  // Per block, the plain tape keeps every activation its ops save; with recompute, one
  // (B, T, C) float32 input: 3 x 8 x 16 x 4 = 1536 bytes. Two more blocks add exactly that
  // twice.
  auto saved = [](int64_t layers, bool recompute) {
    Generator gen(2);
    TransformerLM model(small(false, layers), gen);
    model.set_recompute_blocks(recompute);
    const Tensor ids = randint(0, 13, {3, 8}, kInt64, gen);
    return measure_step(sum(model(ids))).saved_bytes;
  };
  EXPECT_EQ(saved(4, true) - saved(2, true), 2 * 1536);
  const int64_t plain_per_block = (saved(4, false) - saved(2, false)) / 2;
  EXPECT_GT(plain_per_block, 10 * 1536);  // q, k, v, the SwiGLU's hidden units, the norms...
  // One recompute node per block on the tape, and nothing of the blocks' ops.
  Generator gen(3);
  TransformerLM model(small(false, 3), gen);
  model.set_recompute_blocks(true);
  const Tensor out = model(randint(0, 13, {1, 5}, kInt64, gen));
  int nodes = 0, attention = 0;
  for (const TapeEntry& e : tape_entries(sum(out))) {
    nodes += e.op == "recompute";
    attention += e.op == "scaled_dot_product_attention";
  }
  EXPECT_EQ(nodes, 3);
  EXPECT_EQ(attention, 0);
}

TEST(RecomputeTest, ADropoutInsideDrawsTheSameMaskAgain) {
  // The second run starts from the first run's position of the default generator; after the
  // backward the generator is where the backward found it.
  Generator init(4);
  const Tensor x = testing::leaf({4, 6}, init);
  const Tensor w = testing::leaf({6, 6}, init);
  auto fn = [&](const std::vector<Tensor>& in) { return dropout(matmul(in[0], w), 0.5, true); };
  default_generator().manual_seed(7);
  const Tensor plain = fn({x});
  const auto g_plain = grad({plain}, {x, w}, {ones({4, 6}, kFloat64)});
  default_generator().manual_seed(7);
  const Tensor out = recompute(fn, {x}, {w});
  EXPECT_EQ(as_doubles(out), as_doubles(plain));
  const uint64_t after_forward = default_generator().offset();
  const auto g = grad({out}, {x, w}, {ones({4, 6}, kFloat64)});
  EXPECT_EQ(default_generator().offset(), after_forward);
  EXPECT_EQ(as_doubles(g[0]), as_doubles(g_plain[0]));
  EXPECT_EQ(as_doubles(g[1]), as_doubles(g_plain[1]));
}

TEST(RecomputeTest, AutocastIsReplayed) {
  // Under a bfloat16 autocast the first run's matmul took bfloat16 inputs; the second run,
  // in a backward outside any guard, must too, or its gradient is float32's.
  Generator gen(6);
  const Tensor x = randn({4, 8}, kFloat32, gen).requires_grad_();
  const Tensor w = randn({8, 8}, kFloat32, gen).requires_grad_();
  auto fn = [&](const std::vector<Tensor>& in) { return sum(matmul(in[0], w).to(kFloat32)); };
  Tensor plain, out;
  {
    AutocastGuard autocast(kBFloat16);
    plain = fn({x});
    out = recompute(fn, {x}, {w});
  }
  const auto g_plain = grad({plain}, {x, w}), g = grad({out}, {x, w});
  EXPECT_EQ(as_doubles(g[0]), as_doubles(g_plain[0]));
  EXPECT_EQ(as_doubles(g[1]), as_doubles(g_plain[1]));
}

TEST(RecomputeTest, AParameterChangedInPlaceBeforeTheBackwardIsRefused) {
  // The second run would read the new weight and differentiate another function.
  Generator gen(9);
  const Tensor x = testing::leaf({2, 3}, gen), w = testing::leaf({3, 3}, gen);
  const Tensor out =
      recompute([&](const std::vector<Tensor>& in) { return sum(matmul(in[0], w)); }, {x}, {w});
  {
    NoGradGuard no_grad;
    w.detach().fill_(0.5);
  }
  EXPECT_TG_THROW(out.backward(), MisuseError, "recompute");
}

TEST(RecomputeTest, WithoutGradItIsJustTheFunction) {
  Generator gen(8);
  const Tensor x = randn({2, 3}, kFloat64, gen);
  int calls = 0;
  auto fn = [&](const std::vector<Tensor>& in) {
    ++calls;
    return mul(in[0], 2.0);
  };
  const Tensor out = recompute(fn, {x});
  EXPECT_FALSE(out.requires_grad());
  EXPECT_EQ(out.grad_fn(), nullptr);
  EXPECT_EQ(calls, 1);
  // An input that needs no gradient gets none, and a parameter that does gets it.
  const Tensor w = testing::leaf({3}, gen);
  const Tensor y =
      recompute([&](const std::vector<Tensor>& in) { return sum(mul(in[0], w)); }, {x}, {w});
  y.backward();
  EXPECT_FALSE(x.grad().defined());
  EXPECT_EQ(as_doubles(w.grad()), as_doubles(sum(x, {0})));
}

}  // namespace
}  // namespace tg::nn
