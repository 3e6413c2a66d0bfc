// tests/core/autocast_test.cpp — core/autocast.h: which dtype each rule casts to, that the
// casts are ordinary ops on the tape (so autocast equals writing the casts by hand, bit for
// bit, gradients included), the weight cache, and the guard's scope. The rules are held to
// torch.autocast by the "autocast" fixtures (tests/ops/reference_test.cpp).
#include <algorithm>

#include "core/tape_print.h"
#include "ops/ops.h"
#include "test_util.h"

namespace {

using tg::AutocastGuard;
using tg::Tensor;
using tg::testing::as_doubles;

Tensor randn(tg::Shape shape, uint64_t seed, bool requires_grad = false) {
  tg::Generator gen(seed);
  Tensor t = tg::randn(shape, tg::kFloat32, gen);
  if (requires_grad) t.requires_grad_();
  return t;
}

int64_t count_ops(const Tensor& root, const std::string& op) {
  const auto entries = tg::tape_entries(root);
  return std::count_if(entries.begin(), entries.end(),
                       [&](const tg::TapeEntry& e) { return e.op == op; });
}

TEST(AutocastTest, IsOffUnlessAGuardIsAlive) {
  EXPECT_FALSE(tg::autocast_enabled());
  {
    AutocastGuard autocast(tg::kBFloat16);
    EXPECT_TRUE(tg::autocast_enabled());
    EXPECT_EQ(tg::autocast_dtype(), tg::kBFloat16);
    {
      AutocastGuard off(tg::kBFloat16, /*enabled=*/false);
      EXPECT_FALSE(tg::autocast_enabled());
    }
    EXPECT_TRUE(tg::autocast_enabled());
  }
  EXPECT_FALSE(tg::autocast_enabled());
}

TEST(AutocastTest, LinearRunsInTheLowDTypeAndTheWeightGradientIsFloat32) {
  const Tensor x = randn({4, 8}, 1), w = randn({6, 8}, 2, true), b = randn({6}, 3, true);
  Tensor y;
  {
    AutocastGuard autocast(tg::kBFloat16);
    y = tg::linear(x, w, b);
  }
  EXPECT_EQ(y.dtype(), tg::kBFloat16);
  tg::backward(tg::sum(y.to(tg::kFloat32)));
  EXPECT_EQ(w.grad().dtype(), tg::kFloat32);
  EXPECT_EQ(b.grad().dtype(), tg::kFloat32);
  EXPECT_EQ(w.dtype(), tg::kFloat32);  // the master weight itself is never converted
}

TEST(AutocastTest, EqualsTheSameCastsWrittenByHandBitForBit) {
  const Tensor x = randn({5, 16}, 4);
  Tensor w1 = randn({12, 16}, 5, true), w2 = randn({3, 12}, 6, true);
  Tensor auto_loss;
  {
    AutocastGuard autocast(tg::kBFloat16);
    auto_loss = tg::cross_entropy(tg::linear(tg::relu(tg::linear(x, w1)), w2),
                                  tg::tensor(std::vector<int64_t>{0, 1, 2, 1, 0}));
  }
  tg::backward(auto_loss);
  const std::vector<double> dw1_auto = as_doubles(w1.grad()), dw2_auto = as_doubles(w2.grad());
  w1.set_grad(Tensor());
  w2.set_grad(Tensor());
  const tg::DType bf = tg::kBFloat16;
  const Tensor h = tg::relu(tg::linear(x.to(bf), w1.to(bf)));
  const Tensor hand_loss = tg::cross_entropy(tg::linear(h, w2.to(bf)).to(tg::kFloat32),
                                             tg::tensor(std::vector<int64_t>{0, 1, 2, 1, 0}));
  tg::backward(hand_loss);
  EXPECT_EQ(auto_loss.dtype(), tg::kFloat32);  // cross_entropy: kInFloat32
  EXPECT_EQ(auto_loss.item<float>(), hand_loss.item<float>());
  EXPECT_EQ(as_doubles(w1.grad()), dw1_auto);
  EXPECT_EQ(as_doubles(w2.grad()), dw2_auto);
}

TEST(AutocastTest, Float16WorksTheSameWay) {
  const Tensor x = randn({2, 3}, 7), w = randn({4, 3}, 8, true);
  AutocastGuard autocast(tg::kFloat16);
  EXPECT_EQ(tg::linear(x, w).dtype(), tg::kFloat16);
  EXPECT_EQ(tg::matmul(x, w.t()).dtype(), tg::kFloat16);
}

TEST(AutocastTest, MixedDTypesPromoteToTheWidestOnlyUnderAutocast) {
  const Tensor a = randn({3}, 9), b = randn({3}, 10).to(tg::kBFloat16);
  EXPECT_TG_THROW(tg::add(a, b), DTypeError, "add", "float32", "bfloat16");
  AutocastGuard autocast(tg::kBFloat16);
  EXPECT_EQ(tg::add(a, b).dtype(), tg::kFloat32);
  EXPECT_EQ(tg::mul(b, a).dtype(), tg::kFloat32);
  EXPECT_EQ(tg::cat({b, a}, 0).dtype(), tg::kFloat32);
  EXPECT_EQ(tg::add(b, b).dtype(), tg::kBFloat16);  // nothing to promote
  // float16 with bfloat16: neither holds the other, so both go to float32 (as in PyTorch)
  EXPECT_EQ(tg::add(b, b.to(tg::kFloat16)).dtype(), tg::kFloat32);
  EXPECT_EQ(tg::rms_norm(b, tg::ones({3}), 1e-5).dtype(), tg::kFloat32);
}

TEST(AutocastTest, LeavesFloat64AndOpsWithoutARuleAlone) {
  const Tensor x = randn({2, 3}, 11).to(tg::kFloat64), w = randn({4, 3}, 12).to(tg::kFloat64);
  AutocastGuard autocast(tg::kBFloat16);
  EXPECT_EQ(tg::linear(x, w).dtype(), tg::kFloat64);
  const Tensor f = randn({2, 3}, 13);
  EXPECT_EQ(tg::relu(f).dtype(), tg::kFloat32);
  EXPECT_EQ(tg::softmax(f, -1).dtype(), tg::kFloat32);
  EXPECT_EQ(tg::softmax(f.to(tg::kBFloat16), -1).dtype(), tg::kBFloat16);
}

TEST(AutocastTest, AttentionRunsInTheLowDType) {
  const Tensor q = randn({1, 2, 4, 8}, 14), k = randn({1, 2, 4, 8}, 15);
  const Tensor v = randn({1, 2, 4, 8}, 16);
  AutocastGuard autocast(tg::kBFloat16);
  EXPECT_EQ(tg::scaled_dot_product_attention(q, k, v, {}, /*causal=*/true).dtype(), tg::kBFloat16);
}

TEST(AutocastTest, AWeightUsedTwiceIsCastOnceAndGetsBothGradients) {
  const Tensor x = randn({2, 4}, 17);
  Tensor w = randn({4, 4}, 18, true);
  Tensor loss;
  {
    AutocastGuard autocast(tg::kBFloat16);
    loss = tg::sum(tg::linear(tg::linear(x, w), w).to(tg::kFloat32));
    // on the tape: w's cast, once (x's is not recorded: x needs no gradient), and the final
    // .to(float32); without the cache w would be cast twice
    EXPECT_EQ(count_ops(loss, "to"), 2);
  }
  tg::backward(loss);
  const std::vector<double> once = as_doubles(w.grad());
  w.set_grad(Tensor());
  const Tensor wb = w.to(tg::kBFloat16);
  tg::backward(tg::sum(tg::linear(tg::linear(x.to(tg::kBFloat16), wb), wb).to(tg::kFloat32)));
  EXPECT_EQ(as_doubles(w.grad()), once);
}

TEST(AutocastTest, TheCacheForgetsAWeightChangedInPlaceAndEndsWithTheGuard) {
  const Tensor x = tg::ones({1, 2});
  Tensor w = tg::ones({1, 2}).requires_grad_();
  AutocastGuard autocast(tg::kBFloat16);
  EXPECT_EQ(tg::linear(x, w).to(tg::kFloat32).item<float>(), 2.0f);
  {
    tg::NoGradGuard no_grad;
    w.fill_(3.0);  // an optimizer step inside the guard
  }
  EXPECT_EQ(tg::linear(x, w).to(tg::kFloat32).item<float>(), 6.0f);
}

TEST(AutocastTest, ACastUnderNoGradIsNotCachedForLaterRecordedUse) {
  const Tensor x = randn({1, 3}, 19), w = randn({2, 3}, 20, true);
  AutocastGuard autocast(tg::kBFloat16);
  {
    tg::NoGradGuard no_grad;
    EXPECT_FALSE(tg::linear(x, w).requires_grad());
  }
  const Tensor y = tg::linear(x, w);
  ASSERT_TRUE(y.requires_grad());
  tg::backward(tg::sum(y.to(tg::kFloat32)));
  EXPECT_TRUE(w.grad().defined());
}

TEST(AutocastTest, BackwardInsideTheGuardGivesTheSameGradients) {
  const Tensor x = randn({3, 5}, 21);
  Tensor w = randn({2, 5}, 22, true);
  std::vector<double> inside;
  {
    AutocastGuard autocast(tg::kBFloat16);
    tg::backward(tg::mse_loss(tg::linear(x, w), tg::zeros({3, 2})));
    inside = as_doubles(w.grad());
  }
  w.set_grad(Tensor());
  Tensor loss;
  {
    AutocastGuard autocast(tg::kBFloat16);
    loss = tg::mse_loss(tg::linear(x, w), tg::zeros({3, 2}));
  }
  EXPECT_EQ(loss.dtype(), tg::kFloat32);  // mse_loss: kInFloat32
  tg::backward(loss);
  EXPECT_EQ(as_doubles(w.grad()), inside);
}

TEST(AutocastTest, RefusesADTypeThatIsNotHalfPrecision) {
  EXPECT_TG_THROW(AutocastGuard(tg::kFloat32), DTypeError, "autocast", "bfloat16 or float16",
                  "float32");
  EXPECT_TG_THROW(AutocastGuard(tg::kInt64), DTypeError, "autocast", "int64");
  EXPECT_FALSE(tg::autocast_enabled());
}

TEST(AutocastTest, RuleNames) {
  EXPECT_STREQ(tg::autocast_rule_name(tg::AutocastRule::kLowPrecision), "low precision");
  EXPECT_STREQ(tg::autocast_rule_name(tg::AutocastRule::kInFloat32), "float32");
  EXPECT_STREQ(tg::autocast_rule_name(tg::AutocastRule::kPromote), "promote");
}

}  // namespace
