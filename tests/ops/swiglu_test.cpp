// tests/ops/swiglu_test.cpp — swiglu(a, b) and the fused silu_and_mul(x), each checked against
// its composition from primitives.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "test_util.h"

namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using tg::Tensor;

std::vector<double> values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }

// The composed twins, built only from differentiable primitives (no fused backward):
// silu(a) = a / (1 + e^-a), swiglu = silu(a) * b, silu_and_mul = swiglu of the two halves.
Tensor composed_swiglu(const Tensor& a, const Tensor& b) {
  return tg::mul(tg::div(a, tg::add(tg::exp(tg::neg(a)), 1.0)), b);
}
Tensor composed_silu_and_mul(const Tensor& x) {
  const int64_t h = x.size(-1) / 2;
  return composed_swiglu(x.narrow(-1, 0, h), x.narrow(-1, h, h));
}

// d(sum(y * gout))/d(inputs) for y = fn(inputs).
std::vector<Tensor> grads(const Tensor& y, const std::vector<Tensor>& inputs, const Tensor& gout) {
  return tg::grad({y}, inputs, {gout});
}

TEST(SwigluTest, ForwardValues) {
  // silu(1) = sigmoid(1) = 0.7310585786300049; silu(0) = 0; silu(-2) = -2 * sigmoid(-2)
  const Tensor a = tg::tensor(std::vector<double>{1.0, 0.0, -2.0});
  const Tensor b = tg::tensor(std::vector<double>{2.0, 5.0, -1.0});
  EXPECT_THAT(values(tg::swiglu(a, b)),
              Pointwise(DoubleNear(1e-15), {1.4621171572600098, 0.0, 0.2384058440442351}));
}

TEST(SwigluTest, SiluAndMulSplitsTheLastDim) {
  // rows [a | b]: (1, 0 | 2, 5) and (-2, 1 | -1, 3)
  const Tensor x =
      tg::tensor(std::vector<double>{1.0, 0.0, 2.0, 5.0, -2.0, 1.0, -1.0, 3.0}, {2, 4});
  const Tensor y = tg::silu_and_mul(x);
  EXPECT_EQ(y.shape(), (tg::Shape{2, 2}));
  EXPECT_THAT(values(y), Pointwise(DoubleNear(1e-15), {1.4621171572600098, 0.0, 0.2384058440442351,
                                                       3 * 0.7310585786300049}));
}

TEST(SwigluTest, BackwardValuesByHand) {
  // a = 0, b = 3: da = b * silu'(0) = 3 * 0.5, db = silu(0) = 0
  Tensor a = tg::tensor(std::vector<double>{0.0}).requires_grad_();
  Tensor b = tg::tensor(std::vector<double>{3.0}).requires_grad_();
  const auto g = grads(tg::swiglu(a, b), {a, b}, tg::ones({1}, tg::kFloat64));
  EXPECT_THAT(values(g[0]), ElementsAre(1.5));
  EXPECT_THAT(values(g[1]), ElementsAre(0.0));
}

TEST(SwigluTest, GradcheckSwiglu) {
  tg::Generator gen(11);
  auto fused = [](const std::vector<Tensor>& in) { return tg::swiglu(in[0], in[1]); };
  auto composed = [](const std::vector<Tensor>& in) { return composed_swiglu(in[0], in[1]); };
  const std::vector<std::pair<Tensor, Tensor>> cases = {
      {tg::testing::leaf({1}, gen), tg::testing::leaf({1}, gen)},
      {tg::testing::leaf({7}, gen), tg::testing::leaf({7}, gen)},
      {tg::testing::leaf({2, 1, 5}, gen), tg::testing::leaf({2, 1, 5}, gen)},
      {tg::testing::swapped_leaf({4, 3}, 0, 1, gen), tg::testing::leaf({3, 4}, gen)},
      {tg::testing::leaf({3, 4}, gen),
       tg::randn({3, 8}, tg::kFloat64, gen).slice(1, 0, 8, 2).requires_grad_()}};
  for (const auto& [a, b] : cases) {
    EXPECT_GRADCHECK(fused, {a, b});
    EXPECT_GRADCHECK(composed, {a, b});
  }
}

TEST(SwigluTest, GradcheckSiluAndMul) {
  tg::Generator gen(12);
  auto fused = [](const std::vector<Tensor>& in) { return tg::silu_and_mul(in[0]); };
  auto composed = [](const std::vector<Tensor>& in) { return composed_silu_and_mul(in[0]); };
  const std::vector<Tensor> cases = {
      tg::testing::leaf({2}, gen), tg::testing::leaf({7, 2}, gen),
      tg::testing::leaf({2, 1, 6}, gen), tg::testing::swapped_leaf({6, 3}, 0, 1, gen),
      tg::randn({3, 16}, tg::kFloat64, gen).slice(1, 0, 16, 2).requires_grad_()};
  for (const Tensor& x : cases) {
    EXPECT_GRADCHECK(fused, {x});
    EXPECT_GRADCHECK(composed, {x});
  }
}

TEST(SwigluTest, FusedAndComposedAgree) {
  tg::Generator gen(13);
  // 129 rows of width 2 * 7: odd sizes, a non-contiguous x.
  Tensor x = tg::randn({14, 129}, tg::kFloat64, gen).t().requires_grad_();
  const Tensor gout = tg::randn({129, 7}, tg::kFloat64, gen);
  const Tensor y = tg::silu_and_mul(x);
  const Tensor yc = composed_silu_and_mul(x);
  EXPECT_THAT(values(y), Pointwise(DoubleNear(1e-14), values(yc)));
  EXPECT_THAT(values(grads(y, {x}, gout)[0]),
              Pointwise(DoubleNear(1e-14), values(grads(yc, {x}, gout)[0])));

  Tensor a = tg::testing::leaf({129}, gen), b = tg::testing::leaf({129}, gen);
  const Tensor g2 = tg::randn({129}, tg::kFloat64, gen);
  const auto fused = grads(tg::swiglu(a, b), {a, b}, g2);
  const auto composed = grads(composed_swiglu(a, b), {a, b}, g2);
  EXPECT_THAT(values(tg::swiglu(a, b)),
              Pointwise(DoubleNear(1e-14), values(composed_swiglu(a, b))));
  EXPECT_THAT(values(fused[0]), Pointwise(DoubleNear(1e-14), values(composed[0])));
  EXPECT_THAT(values(fused[1]), Pointwise(DoubleNear(1e-14), values(composed[1])));
}

TEST(SwigluTest, SiluAndMulEqualsSwigluOfHalves) {
  tg::Generator gen(14);
  const Tensor x = tg::randn({3, 5, 8}, tg::kFloat32, gen);
  EXPECT_EQ(values(tg::silu_and_mul(x)),
            values(tg::swiglu(x.narrow(-1, 0, 4), x.narrow(-1, 4, 4))));
  EXPECT_EQ(values(tg::swiglu(x, x)), values(tg::mul(tg::silu(x), x)));
}

TEST(SwigluTest, OnlyRequestedGradientsAreComputed) {
  tg::Generator gen(15);
  Tensor a = tg::testing::leaf({4}, gen);
  const Tensor b = tg::randn({4}, tg::kFloat64, gen);  // no grad
  const auto g = grads(tg::swiglu(a, b), {a}, tg::ones({4}, tg::kFloat64));
  EXPECT_EQ(g[0].shape(), (tg::Shape{4}));
}

TEST(SwigluTest, Float32MatchesFloat64) {
  tg::Generator gen(16);
  const Tensor x = tg::randn({7, 258}, tg::kFloat64, gen);
  EXPECT_THAT(values(tg::silu_and_mul(x.to(tg::kFloat32))),
              Pointwise(DoubleNear(1e-5), values(tg::silu_and_mul(x))));
}

// Half types compute in float and round once, so they equal the float32 result rounded.
TEST(SwigluTest, HalfTypesRoundTheFloatResult) {
  tg::Generator gen(17);
  for (tg::DType dt : {tg::kFloat16, tg::kBFloat16}) {
    const Tensor x = tg::randn({3, 10}, tg::kFloat32, gen).to(dt);
    const Tensor x32 = x.to(tg::kFloat32);
    const Tensor y = tg::silu_and_mul(x);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(values(y), values(tg::silu_and_mul(x32).to(dt)));
    EXPECT_EQ(values(tg::swiglu(x, x)), values(tg::swiglu(x32, x32).to(dt)));
    // backward in the half type too: same as float32's, rounded
    Tensor leaf = x.detach().requires_grad_();
    Tensor leaf32 = x32.detach().requires_grad_();
    const Tensor dx = grads(tg::silu_and_mul(leaf), {leaf}, tg::ones({3, 5}, dt))[0];
    const Tensor dx32 = grads(tg::silu_and_mul(leaf32), {leaf32}, tg::ones({3, 5}))[0];
    EXPECT_EQ(dx.dtype(), dt);
    EXPECT_EQ(values(dx), values(dx32.to(dt)));
  }
}

TEST(SwigluTest, EmptyInputs) {
  EXPECT_EQ(tg::silu_and_mul(tg::zeros({0, 4})).shape(), (tg::Shape{0, 2}));
  EXPECT_EQ(tg::silu_and_mul(tg::zeros({3, 0})).shape(), (tg::Shape{3, 0}));
  EXPECT_EQ(tg::swiglu(tg::zeros({0}), tg::zeros({0})).numel(), 0);
}

TEST(SwigluTest, ErrorPaths) {
  const Tensor f = tg::zeros({2, 3});
  EXPECT_TG_THROW(tg::swiglu(f, tg::zeros({3, 2})), ShapeError, "swiglu", "(2, 3)", "(3, 2)");
  EXPECT_TG_THROW(tg::swiglu(f, tg::zeros({3})), ShapeError, "swiglu", "(2, 3)", "(3)");
  EXPECT_TG_THROW(tg::swiglu(f, tg::zeros({2, 3}, tg::kFloat64)), DTypeError, "swiglu", "float32",
                  "float64");
  EXPECT_TG_THROW(tg::swiglu(tg::zeros({2}, tg::kInt64), tg::zeros({2}, tg::kInt64)), DTypeError,
                  "swiglu", "int64");
  EXPECT_TG_THROW(tg::silu_and_mul(f), ShapeError, "silu_and_mul", "(2, 3)", "even", "3");
  EXPECT_TG_THROW(tg::silu_and_mul(tg::zeros({7})), ShapeError, "silu_and_mul", "(7)", "7");
  EXPECT_TG_THROW(tg::silu_and_mul(tg::zeros({})), ShapeError, "silu_and_mul", "0-d");
  EXPECT_TG_THROW(tg::silu_and_mul(tg::zeros({2}, tg::kBool)), DTypeError, "silu_and_mul", "bool");
}

}  // namespace
