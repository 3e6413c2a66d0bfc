// tests/nn/norm_test.cpp — RMSNorm and LayerNorm modules.
#include <cmath>

#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn {
namespace {

using ::testing::ElementsAre;
using tg::testing::as_doubles;

std::vector<std::string> keys(const Module& m) { return m.state_dict().keys(); }

TEST(NormTest, RMSNormStartsAtOnesAndEqualsTheOp) {
  RMSNorm norm(4);
  EXPECT_EQ(as_doubles(norm.weight), std::vector<double>(4, 1.0));
  EXPECT_THAT(keys(norm), ElementsAre("weight"));
  // x = (1, 1, 1, 1) * 2: mean(x^2) = 4, y = x / sqrt(4 + eps) ~ 1.
  const Tensor y = norm(full({1, 4}, 2.0));
  for (double v : as_doubles(y)) EXPECT_NEAR(v, 2.0 / std::sqrt(4.0 + 1e-5), 1e-6);
  Generator gen(0);
  const Tensor x = randn({2, 3, 4}, kFloat32, gen);
  init::normal_(norm.weight, 1.0, 0.1, gen);
  EXPECT_EQ(as_doubles(norm(x)), as_doubles(rms_norm(x, norm.weight, 1e-5)));
}

TEST(NormTest, RMSNormOptionsAndPrinting) {
  RMSNorm norm(8, {.eps = 1e-6, .dtype = kFloat64});
  EXPECT_EQ(norm.weight.dtype(), kFloat64);
  EXPECT_EQ(norm.eps, 1e-6);
  EXPECT_EQ(norm.to_string(), "RMSNorm((8,), eps=1e-06, elementwise_affine=True)  # 8 parameters");
  Generator gen(1);
  const Tensor x = randn({3, 8}, kFloat64, gen);
  EXPECT_EQ(as_doubles(norm(x)), as_doubles(rms_norm(x, norm.weight, 1e-6)));
}

TEST(NormTest, LayerNormStartsAtOnesAndZerosAndEqualsTheOp) {
  LayerNorm norm(3);
  EXPECT_EQ(as_doubles(norm.weight), std::vector<double>(3, 1.0));
  EXPECT_EQ(as_doubles(norm.bias), std::vector<double>(3, 0.0));
  EXPECT_THAT(keys(norm), ElementsAre("weight", "bias"));
  // x = (1, 2, 3): mean 2, var 2/3, y = (x - 2) / sqrt(2/3 + eps).
  const std::vector<double> y = as_doubles(norm(tensor({1.f, 2.f, 3.f}, {1, 3})));
  const double s = std::sqrt(2.0 / 3.0 + 1e-5);
  EXPECT_NEAR(y[0], -1 / s, 1e-6);
  EXPECT_NEAR(y[1], 0.0, 1e-6);
  EXPECT_NEAR(y[2], 1 / s, 1e-6);
  Generator gen(2);
  init::normal_(norm.weight, 0, 1, gen);
  init::normal_(norm.bias, 0, 1, gen);
  const Tensor x = randn({4, 3}, kFloat32, gen);
  EXPECT_EQ(as_doubles(norm(x)), as_doubles(layer_norm(x, norm.weight, norm.bias, 1e-5)));
  EXPECT_EQ(norm.to_string(),
            "LayerNorm((3,), eps=1e-05, elementwise_affine=True)  # 6 parameters");
}

TEST(NormTest, LayerNormWithoutBiasOrAffine) {
  LayerNorm no_bias(5, {.bias = false});
  EXPECT_THAT(keys(no_bias), ElementsAre("weight"));
  EXPECT_FALSE(no_bias.bias.defined());
  LayerNorm plain(5, {.eps = 1e-3, .elementwise_affine = false});
  EXPECT_TRUE(keys(plain).empty());
  EXPECT_EQ(plain.extra_repr(), "(5,), eps=0.001, elementwise_affine=False");
  Generator gen(3);
  const Tensor x = randn({2, 5}, kFloat32, gen);
  EXPECT_EQ(as_doubles(plain(x)), as_doubles(layer_norm(x, Tensor(), Tensor(), 1e-3)));
}

TEST(NormTest, Errors) {
  EXPECT_TG_THROW(RMSNorm(0), ValueError, "RMSNorm", "normalized_shape", "0");
  EXPECT_TG_THROW(RMSNorm(4, {.eps = 0}), ValueError, "RMSNorm", "eps", "0");
  EXPECT_TG_THROW(LayerNorm(4, {.eps = -1}), ValueError, "LayerNorm", "eps", "-1");
  EXPECT_TG_THROW(LayerNorm(4, {.dtype = kBool}), DTypeError, "LayerNorm", "bool");
  RMSNorm rms(4);
  EXPECT_TG_THROW(rms(zeros({2, 3})), ShapeError, "RMSNorm", "(2, 3)", "(4)");
  LayerNorm ln(4);
  EXPECT_TG_THROW(ln(zeros({})), ShapeError, "LayerNorm", "()", "(4)");
}

}  // namespace
}  // namespace tg::nn
