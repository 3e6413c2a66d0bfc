// tests/nn/init_test.cpp — the initialisers: fans, gains, statistics, bounds, determinism.
//
// Statistics tolerances: for N independent draws the sample mean has standard error
// sigma / sqrt(N), the sample standard deviation about sigma / sqrt(2N) (normal) or less
// (uniform, lighter tails). Every check allows 5 standard errors, so a correct
// implementation fails with probability < 1e-6 (and a fixed seed makes each test
// deterministic anyway), while a wrong scale (e.g. a missing sqrt(3)) is off by far more.
#include <cmath>

#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn::init {
namespace {

using tg::testing::as_doubles;

struct Stats {
  double mean, std, min, max;
};

Stats stats_of(const Tensor& t) {
  const std::vector<double> v = as_doubles(t);
  double s = 0, lo = v[0], hi = v[0];
  for (double x : v) {
    s += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const double mean = s / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, std::sqrt(ss / static_cast<double>(v.size())), lo, hi};
}

void expect_normal(const Tensor& t, double mean, double std) {
  const Stats s = stats_of(t);
  const double n = static_cast<double>(t.numel());
  EXPECT_NEAR(s.mean, mean, 5 * std / std::sqrt(n));
  EXPECT_NEAR(s.std, std, 5 * std / std::sqrt(2 * n));
}

void expect_uniform(const Tensor& t, double low, double high) {
  const Stats s = stats_of(t);
  const double n = static_cast<double>(t.numel());
  const double std = (high - low) / std::sqrt(12.0);
  EXPECT_NEAR(s.mean, (low + high) / 2, 5 * std / std::sqrt(n));
  EXPECT_NEAR(s.std, std, 5 * std / std::sqrt(2 * n));
  EXPECT_GE(s.min, low);
  EXPECT_LE(s.max, high);
  // With n draws the extremes come within ~(high - low) / n of the bounds.
  EXPECT_LT(s.min - low, (high - low) * 20 / n);
  EXPECT_LT(high - s.max, (high - low) * 20 / n);
}

TEST(InitTest, FansFollowPyTorch) {
  EXPECT_EQ(calculate_fan_in_and_fan_out(zeros({5, 3})), (std::pair<int64_t, int64_t>{3, 5}));
  EXPECT_EQ(calculate_fan_in_and_fan_out(zeros({64, 32, 3, 3})),
            (std::pair<int64_t, int64_t>{288, 576}));
  EXPECT_TG_THROW(calculate_fan_in_and_fan_out(zeros({5})), ValueError,
                  "calculate_fan_in_and_fan_out", "fewer than 2 dimensions", "(5)");
  EXPECT_TG_THROW(calculate_fan_in_and_fan_out(zeros({})), ValueError, "fewer than 2", "()");
}

TEST(InitTest, GainsFollowPyTorch) {
  EXPECT_EQ(calculate_gain(Nonlinearity::kLinear), 1.0);
  EXPECT_EQ(calculate_gain(Nonlinearity::kSigmoid), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::kTanh), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::kLeakyReLU), std::sqrt(2.0 / (1 + 1e-4)));
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::kLeakyReLU, std::sqrt(5.0)), std::sqrt(1.0 / 3));
  EXPECT_EQ(calculate_gain(Nonlinearity::kSELU), 0.75);
}

TEST(InitTest, UniformStatisticsAndBounds) {
  Generator gen(1);
  expect_uniform(uniform_(empty({100000}), -1.0, 2.0, gen), -1.0, 2.0);
  expect_uniform(uniform_(empty({300, 300}, kFloat64), 0.0, 1.0, gen), 0.0, 1.0);
}

TEST(InitTest, NormalStatistics) {
  Generator gen(2);
  expect_normal(normal_(empty({100001}), 3.0, 0.5, gen), 3.0, 0.5);  // odd count
  expect_normal(normal_(empty({200, 500}, kFloat64), 0.0, 1.0, gen), 0.0, 1.0);
  const Tensor zero_std = normal_(empty({4}), 1.5, 0.0, gen);
  EXPECT_EQ(as_doubles(zero_std), std::vector<double>(4, 1.5));
}

TEST(InitTest, TruncNormalStaysInsideAndHasTheTruncatedMoments) {
  Generator gen(3);
  const Tensor t = trunc_normal_(empty({100000}), 0.0, 1.0, -2.0, 2.0, gen);
  const Stats s = stats_of(t);
  EXPECT_GE(s.min, -2.0);
  EXPECT_LE(s.max, 2.0);
  // Var of N(0,1) truncated to [-c, c]: 1 - 2 c pdf(c) / (Phi(c) - Phi(-c)).
  const double pdf = std::exp(-2.0) / std::sqrt(2 * M_PI);
  const double mass = std::erf(2.0 / std::sqrt(2.0));
  const double std = std::sqrt(1 - 4 * pdf / mass);  // 0.8796
  EXPECT_NEAR(s.mean, 0.0, 5 * std / std::sqrt(1e5));
  EXPECT_NEAR(s.std, std, 5 * std / std::sqrt(2e5));
  // A narrow window far from symmetric: every value inside it.
  const Tensor narrow = trunc_normal_(empty({1000}), 0.0, 0.02, 0.01, 0.03, gen);
  EXPECT_GE(stats_of(narrow).min, 0.01);
  EXPECT_LE(stats_of(narrow).max, 0.03);
}

TEST(InitTest, XavierScalesByBothFans) {
  Generator gen(4);
  const double bound = std::sqrt(6.0 / (200 + 300));
  expect_uniform(xavier_uniform_(empty({300, 200}), 1.0, gen), -bound, bound);
  const double gain = 5.0 / 3.0;
  expect_normal(xavier_normal_(empty({300, 200}, kFloat64), gain, gen), 0.0,
                gain * std::sqrt(2.0 / 500));
}

TEST(InitTest, KaimingScalesByTheChosenFan) {
  Generator gen(5);
  // (64, 32, 3, 3): fan_in 288, fan_out 576.
  const double bound = std::sqrt(3.0) * std::sqrt(2.0) / std::sqrt(288.0);
  expect_uniform(
      kaiming_uniform_(empty({64, 32, 3, 3}), 0.0, FanMode::kFanIn, Nonlinearity::kReLU, gen),
      -bound, bound);
  expect_normal(
      kaiming_normal_(empty({64, 32, 3, 3}), 0.0, FanMode::kFanOut, Nonlinearity::kReLU, gen), 0.0,
      std::sqrt(2.0 / 576));
  // Default: leaky_relu with a = 0, i.e. gain sqrt(2), fan_in.
  expect_normal(
      kaiming_normal_(empty({400, 250}), 0.0, FanMode::kFanIn, Nonlinearity::kLeakyReLU, gen), 0.0,
      std::sqrt(2.0 / 250));
  // Linear's default: a = sqrt(5) gives bound 1 / sqrt(fan_in).
  expect_uniform(kaiming_uniform_(empty({500, 100}), std::sqrt(5.0), FanMode::kFanIn,
                                  Nonlinearity::kLeakyReLU, gen),
                 -0.1, 0.1);
  // Zero-element tensors are left alone (as PyTorch), but fans are still required.
  EXPECT_EQ(kaiming_uniform_(empty({0, 3}), 0, FanMode::kFanIn, Nonlinearity::kReLU, gen).numel(),
            0);
  EXPECT_EQ(xavier_normal_(empty({0, 0}), 1.0, gen).numel(), 0);
}

TEST(InitTest, DeterministicForASeedAndDifferentAcrossSeeds) {
  auto draw = [](uint64_t seed) {
    Generator gen(seed);
    return as_doubles(trunc_normal_(empty({50}), 0.0, 1.0, -1.0, 1.0, gen));
  };
  EXPECT_EQ(draw(7), draw(7));
  EXPECT_NE(draw(7), draw(8));
  // uniform_ in float32 is the float64 value rounded once.
  Generator g1(9), g2(9);
  const Tensor f32 = uniform_(empty({10}), -1.0, 1.0, g1);
  const Tensor f64 = uniform_(empty({10}, kFloat64), -1.0, 1.0, g2);
  EXPECT_EQ(as_doubles(f32), as_doubles(f64.to(kFloat32)));
}

TEST(InitTest, FillsLiteralValuesOnTinyTensors) {
  // uniform on [low, low]: exactly low; constant fills; zeros/ones on any dtype.
  Generator gen(0);
  EXPECT_EQ(as_doubles(uniform_(empty({3}), 2.5, 2.5, gen)), std::vector<double>(3, 2.5));
  EXPECT_EQ(as_doubles(constant_(empty({2, 2}, kFloat16), -0.5)), std::vector<double>(4, -0.5));
  EXPECT_EQ(as_doubles(zeros_(ones({3}, kInt64))), std::vector<double>(3, 0));
  EXPECT_EQ(as_doubles(ones_(zeros({2}, kBFloat16))), std::vector<double>(2, 1));
}

TEST(InitTest, WritesIntoParametersWithoutRecording) {
  Tensor w = zeros({4, 3}).requires_grad_();
  Generator gen(10);
  EXPECT_TRUE(grad_mode_enabled());
  const Tensor r = kaiming_uniform_(w, 0.0, FanMode::kFanIn, Nonlinearity::kReLU, gen);
  EXPECT_EQ(r.impl(), w.impl());
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_NE(stats_of(w).max, 0.0);
}

TEST(InitTest, NonContiguousDestinationFilledInItsOwnRowMajorOrder) {
  Generator g1(11), g2(11);
  const Tensor base = zeros({3, 4});
  uniform_(base.t(), 0.0, 1.0, g1);  // (4, 3) view
  const Tensor fresh = uniform_(empty({4, 3}), 0.0, 1.0, g2);
  EXPECT_EQ(as_doubles(base.t()), as_doubles(fresh));
}

TEST(InitTest, HalfPrecisionValuesStayInBounds) {
  Generator gen(12);
  for (DType dt : {kFloat16, kBFloat16}) {
    const Stats s = stats_of(uniform_(empty({5000}, dt), -0.25, 0.25, gen));
    EXPECT_GE(s.min, -0.25);
    EXPECT_LE(s.max, 0.25);
    EXPECT_NEAR(s.mean, 0.0, 0.02);
  }
}

TEST(InitTest, Errors) {
  Generator gen(0);
  EXPECT_TG_THROW(uniform_(zeros({2}), 1.0, 0.0, gen), ValueError, "uniform_", "low (1)",
                  "high (0)");
  EXPECT_TG_THROW(uniform_(zeros({2}, kInt64), 0.0, 1.0, gen), DTypeError, "uniform_", "int64");
  EXPECT_TG_THROW(normal_(zeros({2}), 0.0, -1.0, gen), ValueError, "normal_", "-1");
  EXPECT_TG_THROW(normal_(Tensor(), 0.0, 1.0, gen), ValueError, "normal_", "undefined");
  EXPECT_TG_THROW(trunc_normal_(zeros({2}), 0.0, 0.0, -1, 1, gen), ValueError, "trunc_normal_",
                  "std", "0");
  EXPECT_TG_THROW(trunc_normal_(zeros({2}), 0.0, 1.0, 1, 1, gen), ValueError, "trunc_normal_",
                  "a (1)", "b (1)");
  EXPECT_TG_THROW(trunc_normal_(zeros({2}), 0.0, 1.0, 10, 11, gen), ValueError, "trunc_normal_",
                  "[10, 11]", "too long");
  EXPECT_TG_THROW(xavier_uniform_(zeros({3}), 1.0, gen), ValueError, "calculate_fan_in_and_fan_out",
                  "(3)");
  EXPECT_TG_THROW(kaiming_normal_(zeros({}), 0.0, FanMode::kFanIn, Nonlinearity::kReLU, gen),
                  ValueError, "fewer than 2 dimensions");
  EXPECT_TG_THROW(
      kaiming_uniform_(zeros({2, 2}, kBool), 0, FanMode::kFanIn, Nonlinearity::kReLU, gen),
      DTypeError, "kaiming_uniform_", "bool");
  EXPECT_TG_THROW(constant_(Tensor(), 1.0), ValueError, "constant_", "undefined");
}

}  // namespace
}  // namespace tg::nn::init
