// tests/ops/dropout_test.cpp — dropout: the identity cases, the mask (its seed, its statistics,
// its reuse in the backward), gradients in training mode, dtypes, errors.
#include <cmath>

#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::Each;
using testing::grad_of;
using testing::leaf;

/// x away from 0, so that a zero in the output can only come from the mask.
Tensor nonzero_leaf(const Shape& shape, Generator& gen) {
  return add(rand(shape, kFloat64, gen), 0.5).detach().requires_grad_();
}

/// dropout composed from primitives: x * bernoulli(1 - p) / (1 - p). core/random.h's
/// bernoulli draws one float64 uniform per element and keeps u < 1 - p, as dropout does, so
/// the same seed gives the same mask.
Tensor composed_dropout(const Tensor& x, double p, Generator& gen) {
  const Tensor mask = bernoulli(x.shape(), 1.0 - p, x.dtype(), gen);
  return mul(x, mul(mask, 1.0 / (1.0 - p)));
}

// ---------------------------------------------------------------- identity cases
TEST(DropoutTest, EvalModeAndPZeroReturnXItself) {
  Generator gen(1);
  const Tensor x = leaf({3, 4}, gen);
  const uint64_t offset = gen.offset();
  EXPECT_EQ(dropout(x, 0.5, /*training=*/false, gen).impl(), x.impl());
  EXPECT_EQ(dropout(x, 1.0, /*training=*/false, gen).impl(), x.impl());
  EXPECT_EQ(dropout(x, 0.0, /*training=*/true, gen).impl(), x.impl());
  EXPECT_EQ(gen.offset(), offset);  // nothing drawn
  // The gradient passes through unchanged.
  const Tensor g = randn({3, 4}, kFloat64, gen);
  EXPECT_EQ(as_doubles(grad_of(mul(dropout(x, 0.3, false, gen), 1.0), x, g)), as_doubles(g));
}

// ---------------------------------------------------------------- forward values
TEST(DropoutTest, KeptValuesAreScaledDroppedAreZero) {
  Generator gen(2);
  const Tensor x = tensor({1.0, -2.0, 3.0, 4.0, -5.0, 6.0, 7.0, 8.0});
  const Tensor y = dropout(x, 0.75, true, gen);
  // The mask by hand: element i is kept iff the i-th float64 uniform of seed 2 is < 0.25.
  Generator replay(2);
  std::vector<double> expected;
  int kept = 0;
  for (double v : as_doubles(x)) {
    const bool keep = replay.uniform_double() < 0.25;
    kept += keep;
    expected.push_back(keep ? v * 4.0 : 0.0);  // 1 / (1 - 0.75) = 4, exact
  }
  EXPECT_EQ(as_doubles(y), expected);
  EXPECT_GT(kept, 0);  // the seed keeps some and drops some: both branches are checked
  EXPECT_LT(kept, 8);
  EXPECT_EQ(gen.offset(), replay.offset());  // two words per element
}

TEST(DropoutTest, PEqualsOneGivesZeros) {
  Generator gen(3);
  const Tensor x = leaf({2, 5}, gen);
  const Tensor y = dropout(x, 1.0, true, gen);
  EXPECT_THAT(as_doubles(y), Each(0.0));
  EXPECT_THAT(as_doubles(grad_of(y, x, ones({2, 5}, kFloat64))), Each(0.0));
  // As PyTorch, y = x * 0: a NaN stays NaN (it is not replaced).
  const Tensor z = dropout(tensor({std::nan(""), 1.0}), 1.0, true, gen);
  EXPECT_TRUE(std::isnan(as_doubles(z)[0]));
  EXPECT_EQ(as_doubles(z)[1], 0.0);
}

TEST(DropoutTest, SameSeedSameMask) {
  const Tensor x = ones({64}, kFloat64);
  Generator a(42), b(42), c(43);
  const std::vector<double> ya = as_doubles(dropout(x, 0.5, true, a));
  EXPECT_EQ(ya, as_doubles(dropout(x, 0.5, true, b)));
  EXPECT_NE(ya, as_doubles(dropout(x, 0.5, true, c)));
  // The same generator continues its stream: the next mask is a different one.
  EXPECT_NE(ya, as_doubles(dropout(x, 0.5, true, a)));
}

TEST(DropoutTest, MaskStatistics) {
  // n = 200000 elements kept with probability k = 0.7: the kept count is Binomial(n, k), whose
  // fraction has standard deviation sqrt(k (1 - k) / n) ~= 0.00102. 5 standard deviations
  // (0.0051) is exceeded with probability < 1e-6 for a correct mask, while a wrong keep
  // probability (p instead of 1 - p: 0.3) or a biased uniform misses by far more.
  Generator gen(4);
  const int64_t n = 200000;
  const Tensor y = dropout(ones({n}, kFloat32), 0.3, true, gen);
  int64_t kept = 0;
  double total = 0;
  for (double v : as_doubles(y)) {
    kept += v != 0.0;
    total += v;
  }
  const double sd = std::sqrt(0.7 * 0.3 / static_cast<double>(n));
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 5 * sd);
  // Inverted dropout keeps the expectation: mean(y) = kept fraction / 0.7 ~= 1.
  EXPECT_NEAR(total / n, 1.0, 5 * sd / 0.7);
}

TEST(DropoutTest, Float32AndHalfKeepTheirDType) {
  for (DType dt : {kFloat32, kFloat16, kBFloat16}) {
    Generator gen(5);
    const Tensor x = tensor({1.5, -2.25, 3.0, 0.125, 6.5, -7.0}).to(dt);
    const Tensor y = dropout(x, 0.5, true, gen);
    EXPECT_EQ(y.dtype(), dt);
    // The same mask as in float64 (the draws do not depend on the dtype); x * 2 is exact.
    Generator gen64(5);
    EXPECT_EQ(as_doubles(y), as_doubles(dropout(x.to(kFloat64), 0.5, true, gen64)))
        << dtype_name(dt);
  }
}

// ---------------------------------------------------------------- gradients
TEST(DropoutTest, ForwardAndBackwardUseTheSameMask) {
  Generator gen(6);
  const Tensor x = nonzero_leaf({5, 7}, gen);
  const Tensor y = dropout(x, 0.4, true, gen);
  (void)randn({100}, kFloat64, gen);  // the generator moves on before the backward
  const Tensor dx = grad_of(y, x, ones({5, 7}, kFloat64));
  const std::vector<double> yv = as_doubles(y), dxv = as_doubles(dx);
  for (size_t i = 0; i < yv.size(); ++i) {
    EXPECT_EQ(dxv[i], yv[i] != 0.0 ? 1.0 / 0.6 : 0.0) << "element " << i;
  }
}

TEST(DropoutTest, SavesTheMaskAsOneBytePerElement) {
  Generator gen(7);
  const Tensor y = dropout(leaf({4, 6}, gen), 0.5, true, gen);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "dropout");
  EXPECT_EQ(y.grad_fn()->saved_bytes(), 24u);  // a bool mask: not x, not y (8 bytes each)
}

TEST(DropoutTest, GradcheckInTrainingMode) {
  // Re-seeding inside the function fixes the mask: every evaluation gradcheck makes (the
  // analytic one and each finite difference) sees the same one.
  Generator gen(8);
  Generator mask_gen;
  auto fn = [&mask_gen](const std::vector<Tensor>& in) {
    mask_gen.manual_seed(11);
    return dropout(in[0], 0.4, true, mask_gen);
  };
  EXPECT_GRADCHECK(fn, {leaf({1}, gen)});
  EXPECT_GRADCHECK(fn, {leaf({3, 7}, gen)});
  EXPECT_GRADCHECK(fn, {leaf({2, 1, 129}, gen)});
  const Tensor xt = randn({5, 4}, kFloat64, gen).t().requires_grad_();
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_GRADCHECK(fn, {xt});
  const Tensor xs = randn({3, 8}, kFloat64, gen).slice(1, 0, 8, 2).requires_grad_();
  ASSERT_FALSE(xs.is_contiguous());
  EXPECT_GRADCHECK(fn, {xs});
}

TEST(DropoutTest, FusedAgreesWithComposed) {
  Generator gen(9);
  for (const Shape& shape : {Shape{1}, Shape{7, 129}, Shape{2, 3, 4}}) {
    const Tensor x = leaf(shape, gen);
    Generator a(12), b(12);
    const Tensor fused = dropout(x, 0.25, true, a), composed = composed_dropout(x, 0.25, b);
    EXPECT_EQ(as_doubles(fused), as_doubles(composed)) << fmt::format("{}", shape);
    const Tensor gout = randn(shape, kFloat64, gen);
    EXPECT_EQ(as_doubles(grad_of(fused, x, gout)), as_doubles(grad_of(composed, x, gout)))
        << fmt::format("{}", shape);
  }
}

// The kink convention: dropout is linear in x for a fixed mask and has no kink; the edge
// cases are p = 1 (gradient exactly 0) and p = 0 / eval (gradient passes unchanged), pinned by
// PEqualsOneGivesZeros and EvalModeAndPZeroReturnXItself.

// ---------------------------------------------------------------- errors
TEST(DropoutTest, Errors) {
  Generator gen(10);
  const Tensor x = zeros({2, 3});
  EXPECT_TG_THROW(dropout(x, 1.5, true, gen), ValueError, "dropout", "[0, 1]", "p = 1.5");
  EXPECT_TG_THROW(dropout(x, -0.1, true, gen), ValueError, "dropout", "p = -0.1");
  EXPECT_TG_THROW(dropout(x, std::nan(""), true, gen), ValueError, "dropout", "p = nan");
  // p is checked in eval mode too: a bad p is a bug whether or not this step trains.
  EXPECT_TG_THROW(dropout(x, 2.0, false, gen), ValueError, "dropout", "p = 2");
  EXPECT_TG_THROW(dropout(zeros({2, 3}, kInt64), 0.5, true, gen), DTypeError, "dropout",
                  "floating point", "int64", "(2, 3)");
}

}  // namespace
}  // namespace tg
