// tests/nn/linear_test.cpp — Linear: PyTorch's default init, forward, options, printing.
#include <cmath>

#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn {
namespace {

using ::testing::ElementsAre;
using tg::testing::as_doubles;

TEST(LinearTest, ForwardEqualsTheLinearOp) {
  Generator gen(0);
  Linear lin(3, 2, {}, gen);
  const Tensor x = randn({4, 3}, kFloat32, gen);
  EXPECT_EQ(as_doubles(lin(x)), as_doubles(linear(x, lin.weight, lin.bias)));
  EXPECT_EQ(lin(x).shape(), (Shape{4, 2}));
  // Hand-set weights: y = x W^T + b.
  lin.load_state_dict(StateDict({{"weight", tensor({1.f, 2.f, 3.f, 0.f, -1.f, 0.5f}, {2, 3})},
                                 {"bias", tensor({0.5f, -2.f})}}));
  EXPECT_EQ(as_doubles(lin(tensor({1.f, 1.f, 2.f}, {1, 3}))), (std::vector<double>{9.5, -2.0}));
}

TEST(LinearTest, DefaultInitIsUniformWithinOneOverSqrtInFeatures) {
  Generator gen(1);
  Linear lin(400, 300, {}, gen);
  const double k = 1.0 / std::sqrt(400.0);
  for (const Tensor& p : {lin.weight, lin.bias}) {
    const std::vector<double> v = as_doubles(p);
    double lo = 1, hi = -1, s2 = 0;
    for (double x : v) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      s2 += x * x;
    }
    EXPECT_GE(lo, -k);
    EXPECT_LE(hi, k);
    // The extremes of many draws come close to the bounds.
    EXPECT_LT(lo, -0.97 * k);
    EXPECT_GT(hi, 0.97 * k);
    if (v.size() > 1000) {
      // The std of U(-k, k) is k / sqrt(3); 120000 draws pin it within 1%.
      EXPECT_NEAR(std::sqrt(s2 / v.size()), k / std::sqrt(3.0), 0.01 * k);
    }
  }
  EXPECT_EQ(lin.weight.shape(), (Shape{300, 400}));
  EXPECT_EQ(lin.bias.shape(), (Shape{300}));
}

TEST(LinearTest, InitDrawsWeightThenBiasFromTheGenerator) {
  // The same numbers as kaiming_uniform_(a = sqrt(5)) then uniform_(-k, k) on one generator.
  Generator g1(2), g2(2);
  Linear lin(5, 4, {}, g1);
  const Tensor w = init::kaiming_uniform_(empty({4, 5}), std::sqrt(5.0), init::FanMode::kFanIn,
                                          init::Nonlinearity::kLeakyReLU, g2);
  const Tensor b = init::uniform_(empty({4}), -1 / std::sqrt(5.0), 1 / std::sqrt(5.0), g2);
  EXPECT_EQ(as_doubles(lin.weight), as_doubles(w));
  EXPECT_EQ(as_doubles(lin.bias), as_doubles(b));
  Generator g3(2);
  Linear again(5, 4, {}, g3);
  EXPECT_EQ(as_doubles(again.weight), as_doubles(lin.weight));
}

TEST(LinearTest, OptionsBiasAndDtype) {
  Linear lin(3, 2, {.bias = false, .dtype = kFloat64});
  EXPECT_FALSE(lin.bias.defined());
  EXPECT_EQ(lin.weight.dtype(), kFloat64);
  ASSERT_EQ(lin.named_parameters().size(), 1u);
  EXPECT_EQ(lin.named_parameters()[0].first, "weight");
  EXPECT_EQ(lin.to_string(), "Linear(in_features=3, out_features=2, bias=False)  # 6 parameters");
  Linear with_bias(784, 256);
  EXPECT_EQ(with_bias.extra_repr(), "in_features=784, out_features=256, bias=True");
  EXPECT_THAT(with_bias.state_dict().keys(), ElementsAre("weight", "bias"));
  EXPECT_EQ(with_bias.in_features, 784);
  EXPECT_EQ(with_bias.out_features, 256);
}

TEST(LinearTest, GradientsReachWeightAndBias) {
  Generator gen(3);
  Linear lin(3, 2, {.dtype = kFloat64}, gen);
  const Tensor x = randn({5, 3}, kFloat64, gen);
  sum(lin(x)).backward();
  // d sum(x W^T + b) / dW[o, i] = sum_n x[n, i]; / db[o] = N.
  const std::vector<double> col = as_doubles(sum(x, {0}));
  const std::vector<double> dw = as_doubles(lin.weight.grad());
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(dw[o * 3 + i], col[i], 1e-12);
  }
  EXPECT_EQ(as_doubles(lin.bias.grad()), (std::vector<double>{5, 5}));
}

TEST(LinearTest, Errors) {
  EXPECT_TG_THROW(Linear(0, 2), ValueError, "Linear", "in_features (0)", "out_features (2)");
  EXPECT_TG_THROW(Linear(2, -1), ValueError, "Linear", "out_features (-1)");
  EXPECT_TG_THROW(Linear(2, 2, {.dtype = kInt64}), DTypeError, "Linear", "int64");
  Linear lin(3, 2);
  EXPECT_TG_THROW(lin(zeros({4, 5})), ShapeError, "linear", "(4, 5)", "(2, 3)");
}

}  // namespace
}  // namespace tg::nn
