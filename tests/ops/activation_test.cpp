// tests/ops/activation_test.cpp — relu, sigmoid, tanh, silu, gelu (exact and tanh form).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using tg::Tensor;

std::vector<double> values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }
Tensor vec(const std::vector<double>& v) { return tg::tensor(v); }

// d(sum(y))/dx at x for y = fn(x).
std::vector<double> grad_at(const std::function<Tensor(const Tensor&)>& fn,
                            const std::vector<double>& x) {
  Tensor leaf = vec(x).requires_grad_();
  Tensor y = fn(leaf);
  return values(tg::grad({y}, {leaf}, {tg::ones_like(y)})[0]);
}

// The ops under test, by name, as one-input functions.
struct Act {
  std::string name;
  std::function<Tensor(const Tensor&)> fn;
};
std::vector<Act> all_acts() {
  return {{"relu", [](const Tensor& x) { return tg::relu(x); }},
          {"sigmoid", [](const Tensor& x) { return tg::sigmoid(x); }},
          {"tanh", [](const Tensor& x) { return tg::tanh(x); }},
          {"silu", [](const Tensor& x) { return tg::silu(x); }},
          {"gelu", [](const Tensor& x) { return tg::gelu(x); }},
          {"gelu_tanh", [](const Tensor& x) { return tg::gelu(x, true); }}};
}

// x = (-2, -0.5, 0, 1, 3); expected values worked out from the definitions (e = 2.718...):
// sigmoid(1) = 1 / (1 + 1/e) = 0.7310585786..., tanh(1) = (e^2 - 1) / (e^2 + 1) = 0.7615941559...
const std::vector<double> kX = {-2.0, -0.5, 0.0, 1.0, 3.0};

TEST(ActivationTest, ReluForwardValues) {
  EXPECT_THAT(values(tg::relu(vec(kX))), ElementsAre(0.0, 0.0, 0.0, 1.0, 3.0));
}

TEST(ActivationTest, SigmoidForwardValues) {
  EXPECT_THAT(values(tg::sigmoid(vec(kX))),
              Pointwise(DoubleNear(1e-15), {0.11920292202211755, 0.3775406687981454, 0.5,
                                            0.7310585786300049, 0.9525741268224334}));
}

TEST(ActivationTest, TanhForwardValues) {
  EXPECT_THAT(values(tg::tanh(vec(kX))),
              Pointwise(DoubleNear(1e-15), {-0.9640275800758169, -0.46211715726000974, 0.0,
                                            0.7615941559557649, 0.9950547536867305}));
}

TEST(ActivationTest, SiluForwardValues) {
  // silu(x) = x * sigmoid(x): -2 * 0.1192... = -0.2384..., 3 * 0.9525... = 2.8577...
  EXPECT_THAT(values(tg::silu(vec(kX))),
              Pointwise(DoubleNear(1e-15), {-0.2384058440442351, -0.1887703343990727, 0.0,
                                            0.7310585786300049, 2.8577223804672998}));
}

TEST(ActivationTest, GeluExactForwardValues) {
  // gelu(1) = Phi(1) = 0.8413447460685429, the probability a standard normal is below 1.
  EXPECT_THAT(values(tg::gelu(vec(kX))),
              Pointwise(DoubleNear(1e-15), {-0.04550026389635842, -0.15426876936299344, 0.0,
                                            0.841344746068543, 2.99595030590511}));
}

TEST(ActivationTest, GeluTanhForwardValues) {
  EXPECT_THAT(values(tg::gelu(vec(kX), true)),
              Pointwise(DoubleNear(1e-15), {-0.04540230591222494, -0.15428599017485606, 0.0,
                                            0.8411919906082768, 2.996362607918227}));
}

TEST(ActivationTest, SigmoidDoesNotOverflow) {
  EXPECT_THAT(values(tg::sigmoid(vec({-1000.0, 1000.0}))), ElementsAre(0.0, 1.0));
  EXPECT_THAT(values(tg::silu(vec({-1000.0, 1000.0}))), ElementsAre(-0.0, 1000.0));
}

TEST(ActivationTest, DerivativeValuesByHand) {
  // sigmoid'(0) = 0.5 * 0.5, tanh'(0) = 1 - 0, silu'(0) = s(0) = 0.5, gelu'(0) = Phi(0) = 0.5
  EXPECT_THAT(grad_at([](const Tensor& x) { return tg::sigmoid(x); }, {0.0}), ElementsAre(0.25));
  EXPECT_THAT(grad_at([](const Tensor& x) { return tg::tanh(x); }, {0.0}), ElementsAre(1.0));
  EXPECT_THAT(grad_at([](const Tensor& x) { return tg::silu(x); }, {0.0}), ElementsAre(0.5));
  EXPECT_THAT(grad_at([](const Tensor& x) { return tg::gelu(x); }, {0.0}), ElementsAre(0.5));
  EXPECT_THAT(grad_at([](const Tensor& x) { return tg::gelu(x, true); }, {0.0}), ElementsAre(0.5));
  // gelu'(1) = Phi(1) + phi(1) = 0.8413447460685429 + 0.24197072451914337
  EXPECT_THAT(grad_at([](const Tensor& x) { return tg::gelu(x); }, {1.0}),
              ElementsAre(DoubleNear(1.0833154705876864, 1e-15)));
}

// relu'(0) = 0, as PyTorch: the mask is out > 0, and relu(0) = 0 fails it. -0 behaves like 0.
TEST(ActivationTest, ReluKinkGradientIsZero) {
  EXPECT_THAT(grad_at([](const Tensor& x) { return tg::relu(x); }, {-1.0, -0.0, 0.0, 1e-300, 2.0}),
              ElementsAre(0.0, 0.0, 0.0, 1.0, 1.0));
}

// As PyTorch: relu(nan) = nan, and the gradient passes through (nan is not <= 0).
TEST(ActivationTest, ReluPropagatesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(values(tg::relu(vec({nan})))[0]));
  EXPECT_THAT(grad_at([](const Tensor& x) { return tg::relu(x); }, {nan}), ElementsAre(1.0));
}

TEST(ActivationTest, GradcheckOnManyShapes) {
  tg::Generator gen(4);
  for (const Act& act : all_acts()) {
    SCOPED_TRACE(act.name);
    auto fn = [&](const std::vector<Tensor>& in) { return act.fn(in[0]); };
    // Away from relu's kink: values with |x| < 0.1 are moved to x + 0.3 (or x - 0.3).
    auto off_kink = [](const Tensor& t) {
      std::vector<double> v = t.to_vector<double>();
      for (double& e : v) {
        if (std::abs(e) < 0.1) e += e < 0 ? -0.3 : 0.3;
      }
      return tg::tensor(v, t.shape());
    };
    std::vector<Tensor> leaves = {
        off_kink(tg::randn({1}, tg::kFloat64, gen)).requires_grad_(),
        off_kink(tg::randn({7}, tg::kFloat64, gen)).requires_grad_(),
        off_kink(tg::randn({2, 1, 5}, tg::kFloat64, gen)).requires_grad_(),
        off_kink(tg::randn({4, 3}, tg::kFloat64, gen)).t().requires_grad_(),
        off_kink(tg::randn({3, 8}, tg::kFloat64, gen)).slice(1, 0, 8, 2).requires_grad_()};
    for (const Tensor& x : leaves) EXPECT_GRADCHECK(fn, {x});
    EXPECT_FALSE(leaves[3].is_contiguous());
    EXPECT_FALSE(leaves[4].is_contiguous());
  }
}

TEST(ActivationTest, NonContiguousInputGivesSameValues) {
  tg::Generator gen(5);
  const Tensor base = tg::randn({5, 3}, tg::kFloat64, gen);
  for (const Act& act : all_acts()) {
    SCOPED_TRACE(act.name);
    EXPECT_EQ(values(act.fn(base.t())), values(act.fn(base.t().contiguous())));
  }
}

TEST(ActivationTest, Float32MatchesFloat64) {
  tg::Generator gen(6);
  const Tensor x = tg::randn({129}, tg::kFloat64, gen);
  for (const Act& act : all_acts()) {
    SCOPED_TRACE(act.name);
    const Tensor y32 = act.fn(x.to(tg::kFloat32));
    EXPECT_EQ(y32.dtype(), tg::kFloat32);
    EXPECT_THAT(values(y32), Pointwise(DoubleNear(1e-6), values(act.fn(x))));
  }
}

// Half types are computed in float and rounded once: exactly the float result, rounded.
TEST(ActivationTest, HalfTypesRoundTheFloatResult) {
  tg::Generator gen(7);
  for (tg::DType dt : {tg::kFloat16, tg::kBFloat16}) {
    const Tensor x = tg::randn({7}, tg::kFloat32, gen).to(dt);
    for (const Act& act : all_acts()) {
      SCOPED_TRACE(act.name);
      const Tensor y = act.fn(x);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(values(y), values(act.fn(x.to(tg::kFloat32)).to(dt)));
    }
  }
}

TEST(ActivationTest, ErrorsNameTheOpAndDType) {
  const Tensor ids = tg::tensor(std::vector<int64_t>{1, 2});
  EXPECT_TG_THROW(tg::relu(ids), DTypeError, "relu", "int64", "(2)");
  EXPECT_TG_THROW(tg::sigmoid(ids), DTypeError, "sigmoid", "int64");
  EXPECT_TG_THROW(tg::tanh(ids), DTypeError, "tanh", "int64");
  EXPECT_TG_THROW(tg::silu(ids), DTypeError, "silu", "int64");
  EXPECT_TG_THROW(tg::gelu(tg::tensor(std::vector<bool>{true})), DTypeError, "gelu", "bool");
}

TEST(ActivationTest, SavesOutputOrInputForBackward) {
  // Modifying the saved tensor in place before backward is caught: relu saved its output,
  // silu saved its input.
  Tensor x = vec({1.0, -1.0}).requires_grad_();
  Tensor y = tg::relu(x);
  y.detach().fill_(5.0);  // same storage: bumps the saved output's version
  EXPECT_THROW(tg::backward(y, tg::ones_like(y)), tg::MisuseError);
}

}  // namespace
