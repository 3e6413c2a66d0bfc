// tests/nn/accounting_test.cpp — the cost of a training step: the formulas of estimate_step
// against what the tape of a real step holds (measure_step), op by op rules, a case worked
// by hand, and the errors.
#include "nn/accounting.h"

#include "test_util.h"

namespace tg::nn {
namespace {

/// The step estimate_step describes: logits of B sequences of T tokens, then the loss.
Tensor step_loss(TransformerLM& model, int64_t B, int64_t T, Generator& gen) {
  const int64_t V = model.config.vocab_size;
  const Tensor ids = randint(0, V, {B, T}, kInt64, gen);
  const Tensor targets = randint(0, V, {B * T}, kInt64, gen);
  return cross_entropy(model(ids).reshape({B * T, V}), targets);
}

TEST(AccountingTest, ACaseWorkedByHand) {
  // C = 8, F = 12, V = 11, H = 2, L = 2, B = 3, T = 5, so N = 15.
  // FLOPs of one layer: 2 N (3 C^2 + C^2 + 2 C F + F C) = 30 * 544 = 16320 for the linear
  // layers, 4 B T^2 C = 2400 for attention; the head 2 N C V = 2640. 2 * 18720 + 2640.
  // Saved bytes: the tape of this very step, as print_tape listed it, op by op: ids 120,
  // per layer 572 + 1248 + 2 * 40 + 2040 + 736 + 572 + 2 * 864 + 1440 + 1104 = 9520,
  // final norm 572, head 832, loss 840.
  const TransformerConfig c{.vocab_size = 11,
                            .context_length = 8,
                            .d_model = 8,
                            .n_layers = 2,
                            .n_heads = 2,
                            .d_ff = 12,
                            .rope = true};
  const StepCost by_hand{.forward_flops = 40080, .saved_bytes = 120 + 2 * 9520 + 572 + 832 + 840};
  EXPECT_EQ(estimate_step(c, 3, 5), by_hand);
  Generator gen(1);
  TransformerLM model(c, gen);
  EXPECT_EQ(measure_step(step_loss(model, 3, 5, gen)), by_hand);
}

TEST(AccountingTest, TheFormulasAreWhatTheTapeHolds) {
  struct Case {
    int64_t C, F, V, H, L, B, T;
    bool rope;
  };
  for (const Case& k : {Case{8, 12, 11, 2, 1, 1, 1, false}, Case{8, 12, 11, 2, 2, 3, 5, true},
                        Case{16, 40, 7, 4, 3, 2, 9, true}, Case{12, 20, 30, 3, 2, 4, 6, false},
                        Case{4, 4, 2, 1, 1, 2, 16, true}}) {
    const TransformerConfig c{.vocab_size = k.V,
                              .context_length = 16,
                              .d_model = k.C,
                              .n_layers = k.L,
                              .n_heads = k.H,
                              .d_ff = k.F,
                              .rope = k.rope};
    Generator gen(2);
    TransformerLM model(c, gen);
    EXPECT_EQ(estimate_step(c, k.B, k.T), measure_step(step_loss(model, k.B, k.T, gen)))
        << fmt::format("C {} F {} V {} H {} L {} B {} T {} rope {}", k.C, k.F, k.V, k.H, k.L, k.B,
                       k.T, k.rope);
  }
}

TEST(AccountingTest, EachOpsFlopsFromItsShapes) {
  Generator gen(3);
  const Tensor x = randn({2, 5, 3}, kFloat32, gen).requires_grad_();
  const Tensor w = randn({4, 3}, kFloat32, gen);
  EXPECT_EQ(measure_step(linear(x, w)).forward_flops, 2 * 10 * 3 * 4);
  const Tensor a = randn({2, 6, 3}, kFloat32, gen).requires_grad_();
  const Tensor b = randn({2, 3, 7}, kFloat32, gen);
  EXPECT_EQ(measure_step(matmul(a, b)).forward_flops, 2 * 2 * 6 * 7 * 3);
  const Tensor q = randn({2, 3, 4, 5}, kFloat32, gen).requires_grad_();
  const Tensor k = randn({2, 3, 6, 5}, kFloat32, gen), v = randn({2, 3, 6, 2}, kFloat32, gen);
  EXPECT_EQ(measure_step(scaled_dot_product_attention(q, k, v)).forward_flops,
            2 * 2 * 3 * 4 * 6 * (5 + 2));
  // Elementwise ops cost nothing here, but what they save is counted: relu keeps its output.
  const StepCost r = measure_step(relu(x));
  EXPECT_EQ(r.forward_flops, 0);
  EXPECT_EQ(r.saved_bytes, 4 * 30);
  // A leaf has no tape; backward frees what the tape saved.
  EXPECT_EQ(measure_step(x), StepCost{});
  const Tensor y = sum(relu(x));
  y.backward();
  EXPECT_EQ(measure_step(y).saved_bytes, 0);
}

TEST(AccountingTest, Errors) {
  const TransformerConfig c{
      .vocab_size = 11, .context_length = 8, .d_model = 8, .n_layers = 2, .n_heads = 2, .d_ff = 12};
  EXPECT_TG_THROW(estimate_step(c, 0, 4), ValueError, "estimate_step", "B = 0");
  EXPECT_TG_THROW(estimate_step(c, 2, 9), ValueError, "estimate_step", "T = 9", "context length 8");
  TransformerConfig bad = c;
  bad.n_heads = 3;
  EXPECT_TG_THROW(estimate_step(bad, 2, 4), ValueError, "d_model 8", "n_heads 3");
  TransformerConfig gqa = c;
  gqa.n_kv_heads = 1;
  EXPECT_TG_THROW(estimate_step(gqa, 2, 4), ValueError, "estimate_step",
                  "n_kv_heads 1 of n_heads 2 (grouped-query attention) is not in it");
  EXPECT_TG_THROW(measure_step(Tensor()), MisuseError, "tape_entries", "undefined");
}

}  // namespace
}  // namespace tg::nn
