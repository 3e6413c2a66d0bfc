// tests/ops/unary_test.cpp — pow, exp, log, sqrt, rsqrt, abs, clamp.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "test_util.h"

namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using tg::Tensor;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }
Tensor vec(std::vector<double> v) { return tg::tensor(v); }

// d(sum(dout * y))/dx for y = fn(x), with dout = ones unless given.
std::vector<double> grad_of(const std::function<Tensor(const Tensor&)>& fn, std::vector<double> x,
                            std::vector<double> dout = {}) {
  Tensor leaf = vec(x).requires_grad_();
  if (dout.empty()) dout.assign(x.size(), 1.0);
  return values(tg::grad({fn(leaf)}, {leaf}, {vec(dout)})[0]);
}

enum class Domain {
  kAnywhere,      // standard normal
  kPositive,      // in [0.5, 3.5): away from the poles and kinks at 0
  kAwayFromZero,  // |x| in [0.2, ...): either sign, away from the kink at 0
};

Tensor make(const tg::Shape& shape, tg::Generator& gen, Domain domain) {
  std::vector<double> v = tg::randn(shape, tg::kFloat64, gen).to_vector<double>();
  for (double& e : v) {
    if (domain == Domain::kPositive) e = 0.5 + std::abs(e);
    if (domain == Domain::kAwayFromZero) e += e < 0 ? -0.2 : 0.2;
  }
  return tg::tensor(v, shape);
}

// Gradchecks fn on float64 leaves of several shapes: 1-D, with a size-1 dim, 0-d, and
// non-contiguous (a transpose and a strided slice).
void expect_gradchecks(const std::function<Tensor(const Tensor&)>& fn, Domain domain) {
  tg::Generator gen(31);
  std::vector<std::pair<std::string, Tensor>> cases;
  cases.emplace_back("(5)", make({5}, gen, domain));
  cases.emplace_back("(2, 1, 3)", make({2, 1, 3}, gen, domain));
  cases.emplace_back("0-d", make({}, gen, domain));
  cases.emplace_back("transposed (3, 4)", make({4, 3}, gen, domain).t());
  cases.emplace_back("stepped slice (2, 3)", make({2, 6}, gen, domain).slice(1, 1, 6, 2));
  ASSERT_FALSE(cases[3].second.is_contiguous());
  ASSERT_FALSE(cases[4].second.is_contiguous());
  for (auto& [name, x] : cases) {
    SCOPED_TRACE(name);
    x.requires_grad_();
    EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return fn(in[0]); }, {x});
  }
}

// ---------------------------------------------------------------- pow

TEST(PowTest, ForwardValues) {
  EXPECT_EQ(values(tg::pow(vec({2, -3, 0.5}), 2.0)), (std::vector<double>{4, 9, 0.25}));
  EXPECT_EQ(values(tg::pow(vec({4, 9, 0}), 0.5)), (std::vector<double>{2, 3, 0}));
  EXPECT_EQ(values(tg::pow(vec({2, -4, 0}), -1.0)), (std::vector<double>{0.5, -0.25, kInf}));
  EXPECT_EQ(values(tg::pow(vec({-2, 0, 7}), 0.0)), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(values(tg::pow(vec({-2}), 3.0)), (std::vector<double>{-8}));
  EXPECT_TRUE(std::isnan(values(tg::pow(vec({-8}), 1.0 / 3))[0]));  // real pow: no odd roots
  EXPECT_EQ(tg::pow(tg::tensor({3.f, 4.f}), 1.5).to_vector<float>(),
            (std::vector<float>{std::pow(3.f, 1.5f), 8.f}));
  // float16: sqrt(2) = 1.41421... rounds to 1.4140625 (PyTorch gives the same)
  EXPECT_EQ(values(tg::pow(tg::tensor({2.f, 3.f}).to(tg::kFloat16), 0.5)),
            (std::vector<double>{1.4140625, 1.732421875}));
}

TEST(PowTest, BackwardByHand) {
  // d(x^3)/dx = 3x^2; d(x^-2)/dx = -2x^-3
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::pow(x, 3.0); }, {2, -1}, {1, 2}),
            (std::vector<double>{12, 6}));
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::pow(x, -2.0); }, {2, 0.5}),
            (std::vector<double>{-0.25, -16}));
}

TEST(PowTest, Gradcheck) {
  for (double p : {2.0, 3.0, -1.0}) {
    SCOPED_TRACE(p);
    expect_gradchecks([p](const Tensor& x) { return tg::pow(x, p); }, Domain::kAwayFromZero);
  }
  for (double p : {0.5, -1.5, 2.7}) {
    SCOPED_TRACE(p);
    expect_gradchecks([p](const Tensor& x) { return tg::pow(x, p); }, Domain::kPositive);
  }
}

TEST(PowTest, GradientAtZeroMatchesPyTorch) {
  // p * 0^(p-1): PyTorch gives inf for p = 0.5, -inf for p = -1, 0 for p = 1.5 and p = 2,
  // and 1 for p = 1. For x = -1 and p = 0.5, 1.5 the real power is undefined: nan.
  auto at = [](double p) {
    return grad_of([p](const Tensor& x) { return tg::pow(x, p); }, {0, 1, -1});
  };
  EXPECT_EQ(at(0.5)[0], kInf);
  EXPECT_EQ(at(0.5)[1], 0.5);
  EXPECT_TRUE(std::isnan(at(0.5)[2]));
  EXPECT_EQ(at(-1.0), (std::vector<double>{-kInf, -1, -1}));
  EXPECT_EQ(at(1.0), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(at(2.0), (std::vector<double>{0, 2, -2}));
  EXPECT_EQ(at(1.5)[0], 0.0);
  EXPECT_TRUE(std::isnan(at(1.5)[2]));
}

TEST(PowTest, ExponentZeroHasZeroGradientEverywhere) {
  // x^0 = 1 is constant: dx = 0 even at x = 0 (where p * x^(p-1) would be 0 * inf = nan),
  // and even for a non-finite upstream gradient, as PyTorch returns zeros.
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::pow(x, 0.0); }, {0, -2, 3, kInf},
                    {1, kNaN, kInf, 1}),
            (std::vector<double>{0, 0, 0, 0}));
}

// ---------------------------------------------------------------- exp

TEST(ExpTest, ForwardValues) {
  EXPECT_THAT(values(tg::exp(vec({0, 1, -1, -kInf}))),
              ElementsAre(1.0, DoubleNear(2.718281828459045, 1e-15),
                          DoubleNear(0.36787944117144233, 1e-16), 0.0));
  EXPECT_THAT(tg::exp(tg::tensor({1.f, 2.f})).to_vector<float>(),
              ElementsAre(FloatEq(2.7182817f), FloatEq(7.3890561f)));
  // float16 keeps 11 significant bits: e = 2.71875, e^2 = 7.390625 (as PyTorch rounds them)
  EXPECT_EQ(values(tg::exp(tg::tensor({0.f, 1.f, 2.f}).to(tg::kFloat16))),
            (std::vector<double>{1, 2.71875, 7.390625}));
  EXPECT_EQ(values(tg::exp(tg::tensor({1.f, 2.f}).to(tg::kBFloat16))),
            (std::vector<double>{2.71875, 7.375}));
}

TEST(ExpTest, BackwardIsTheOutput) {
  const std::vector<double> g =
      grad_of([](const Tensor& x) { return tg::exp(x); }, {0, 1, -1}, {2, 1, 1});
  EXPECT_THAT(
      g, ElementsAre(2.0, DoubleNear(std::exp(1.0), 1e-15), DoubleNear(std::exp(-1.0), 1e-16)));
}

TEST(ExpTest, Gradcheck) {
  expect_gradchecks([](const Tensor& x) { return tg::exp(x); }, Domain::kAnywhere);
}

// ---------------------------------------------------------------- log

TEST(LogTest, ForwardValues) {
  EXPECT_THAT(
      values(tg::log(vec({1, std::exp(2.0), 0.5, 0}))),
      ElementsAre(0.0, DoubleNear(2, 1e-15), DoubleNear(-0.6931471805599453, 1e-16), -kInf));
  EXPECT_TRUE(std::isnan(values(tg::log(vec({-1})))[0]));
  EXPECT_THAT(tg::log(tg::tensor({2.f, 10.f})).to_vector<float>(),
              ElementsAre(FloatEq(0.6931472f), FloatEq(2.3025851f)));
  EXPECT_EQ(values(tg::log(tg::tensor({2.f, 10.f}).to(tg::kFloat16))),
            (std::vector<double>{0.693359375, 2.302734375}));
  EXPECT_EQ(values(tg::log(tg::tensor({2.f, 10.f}).to(tg::kBFloat16))),
            (std::vector<double>{0.69140625, 2.296875}));
}

TEST(LogTest, BackwardByHand) {
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::log(x); }, {2, 0.25, -4}, {1, 1, 2}),
            (std::vector<double>{0.5, 4, -0.5}));
}

TEST(LogTest, Gradcheck) {
  expect_gradchecks([](const Tensor& x) { return tg::log(x); }, Domain::kPositive);
}

TEST(LogTest, GradientAtZeroIsInfinityLikePyTorch) {
  // 1/x at 0: +inf (PyTorch: log(0).backward() gives inf). A zero upstream gives 0/0 = nan.
  const std::vector<double> g = grad_of([](const Tensor& x) { return tg::log(x); }, {0, 0}, {1, 0});
  EXPECT_EQ(g[0], kInf);
  EXPECT_TRUE(std::isnan(g[1]));
}

// ---------------------------------------------------------------- sqrt

TEST(SqrtTest, ForwardValues) {
  EXPECT_EQ(values(tg::sqrt(vec({4, 0.25, 0, kInf}))), (std::vector<double>{2, 0.5, 0, kInf}));
  EXPECT_TRUE(std::isnan(values(tg::sqrt(vec({-1})))[0]));
  EXPECT_EQ(tg::sqrt(tg::tensor({2.f})).to_vector<float>(), (std::vector<float>{std::sqrt(2.f)}));
  EXPECT_EQ(values(tg::sqrt(tg::tensor({2.f, 3.f}).to(tg::kFloat16))),
            (std::vector<double>{1.4140625, 1.732421875}));
  EXPECT_EQ(values(tg::sqrt(tg::tensor({2.f, 3.f}).to(tg::kBFloat16))),
            (std::vector<double>{1.4140625, 1.734375}));
}

TEST(SqrtTest, BackwardByHand) {
  // 1 / (2 sqrt(x))
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::sqrt(x); }, {4, 0.25}, {1, 3}),
            (std::vector<double>{0.25, 3}));
}

TEST(SqrtTest, Gradcheck) {
  expect_gradchecks([](const Tensor& x) { return tg::sqrt(x); }, Domain::kPositive);
}

TEST(SqrtTest, GradientAtZeroIsInfinityLikePyTorch) {
  const std::vector<double> g = grad_of([](const Tensor& x) { return tg::sqrt(x); }, {0, -1});
  EXPECT_EQ(g[0], kInf);
  EXPECT_TRUE(std::isnan(g[1]));  // outside the domain: nan, as in PyTorch
}

// ---------------------------------------------------------------- rsqrt

TEST(RsqrtTest, ForwardValues) {
  EXPECT_EQ(values(tg::rsqrt(vec({4, 0.25, 0, kInf}))), (std::vector<double>{0.5, 2, kInf, 0}));
  EXPECT_TRUE(std::isnan(values(tg::rsqrt(vec({-1})))[0]));
  EXPECT_EQ(tg::rsqrt(tg::tensor({2.f})).to_vector<float>(),
            (std::vector<float>{1.f / std::sqrt(2.f)}));
  EXPECT_EQ(values(tg::rsqrt(tg::tensor({2.f, 3.f}).to(tg::kFloat16))),
            (std::vector<double>{0.70703125, 0.5771484375}));
  EXPECT_EQ(values(tg::rsqrt(tg::tensor({2.f, 3.f}).to(tg::kBFloat16))),
            (std::vector<double>{0.70703125, 0.578125}));
}

TEST(RsqrtTest, BackwardByHand) {
  // -1/2 x^(-3/2): x = 4 -> -1/16, x = 0.25 -> -4
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::rsqrt(x); }, {4, 0.25}),
            (std::vector<double>{-0.0625, -4}));
}

TEST(RsqrtTest, Gradcheck) {
  expect_gradchecks([](const Tensor& x) { return tg::rsqrt(x); }, Domain::kPositive);
}

TEST(RsqrtTest, GradientAtZeroIsMinusInfinityLikePyTorch) {
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::rsqrt(x); }, {0}),
            (std::vector<double>{-kInf}));
}

// ---------------------------------------------------------------- abs

TEST(AbsTest, ForwardValues) {
  EXPECT_EQ(values(tg::abs(vec({-2.5, 0, 3, -kInf}))), (std::vector<double>{2.5, 0, 3, kInf}));
  EXPECT_FALSE(std::signbit(values(tg::abs(vec({-0.0})))[0]));
  EXPECT_EQ(tg::abs(tg::tensor({-1.5f, 2.f})).to_vector<float>(), (std::vector<float>{1.5f, 2.f}));
  EXPECT_EQ(values(tg::abs(tg::tensor({-0.1f, 3.f}).to(tg::kBFloat16))),
            (std::vector<double>{0.10009765625, 3}));
  EXPECT_EQ(values(tg::abs(tg::tensor({-0.1f}).to(tg::kFloat16))),
            (std::vector<double>{0.0999755859375}));
}

TEST(AbsTest, BackwardIsTheSign) {
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::abs(x); }, {-2, 3, -0.5}, {1, 2, 3}),
            (std::vector<double>{-1, 2, -3}));
}

TEST(AbsTest, Gradcheck) {
  expect_gradchecks([](const Tensor& x) { return tg::abs(x); }, Domain::kAwayFromZero);
}

TEST(AbsTest, SubgradientAtZeroIsZeroLikePyTorch) {
  // sign(0) = 0 (and sign(-0) = 0); it multiplies dout, so an inf dout gives nan (PyTorch too).
  const std::vector<double> g =
      grad_of([](const Tensor& x) { return tg::abs(x); }, {0, -0.0, 0}, {1, 5, kInf});
  EXPECT_EQ(g[0], 0.0);
  EXPECT_EQ(g[1], 0.0);
  EXPECT_TRUE(std::isnan(g[2]));
  // sign(nan) = 0 in PyTorch too
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::abs(x); }, {kNaN}), (std::vector<double>{0}));
}

// ---------------------------------------------------------------- clamp

TEST(ClampTest, ForwardValues) {
  const Tensor x = vec({-2, -0.5, 0, 0.5, 2});
  EXPECT_EQ(values(tg::clamp(x, -1.0, 1.0)), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(values(tg::clamp(x, 0.0, std::nullopt)), (std::vector<double>{0, 0, 0, 0.5, 2}));
  EXPECT_EQ(values(tg::clamp(x, std::nullopt, 0.0)), (std::vector<double>{-2, -0.5, 0, 0, 0}));
  EXPECT_EQ(values(tg::clamp(x, 0.25, 0.25)), (std::vector<double>{0.25, 0.25, 0.25, 0.25, 0.25}));
  EXPECT_EQ(tg::clamp(tg::tensor({-3.f, 0.3f, 9.f}), -1, 1).to_vector<float>(),
            (std::vector<float>{-1, 0.3f, 1}));
  // bfloat16: the bound 0.1 is rounded to bfloat16 (0.10009765625), as PyTorch does
  EXPECT_EQ(values(tg::clamp(tg::tensor({0.f, 5.f}).to(tg::kBFloat16), 0.1, 4.0)),
            (std::vector<double>{0.10009765625, 4}));
  EXPECT_EQ(values(tg::clamp(tg::tensor({0.f, 5.f}).to(tg::kFloat16), 0.1, 4.0)),
            (std::vector<double>{0.0999755859375, 4}));
}

TEST(ClampTest, NanStaysNan) {
  EXPECT_TRUE(std::isnan(values(tg::clamp(vec({kNaN}), 0.0, 1.0))[0]));
  EXPECT_TRUE(std::isnan(values(tg::clamp(vec({kNaN}), 0.0, std::nullopt))[0]));
  EXPECT_TRUE(std::isnan(values(tg::clamp(vec({kNaN}), std::nullopt, 1.0))[0]));
  // and gets no gradient (neither min <= nan nor nan <= max holds)
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::clamp(x, 0.0, 1.0); }, {kNaN}),
            (std::vector<double>{0}));
}

TEST(ClampTest, BackwardPassesInsideAndZeroOutside) {
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::clamp(x, -1.0, 1.0); }, {-2, -0.5, 0.5, 2},
                    {1, 2, 3, 4}),
            (std::vector<double>{0, 2, 3, 0}));
  // A select, not a product: a non-finite upstream outside the bounds still gives 0.
  EXPECT_EQ(grad_of([](const Tensor& x) { return tg::clamp(x, -1.0, 1.0); }, {-2, 2}, {kInf, kNaN}),
            (std::vector<double>{0, 0}));
}

TEST(ClampTest, Gradcheck) {
  // The values are at least 0.2 away from the bound 0; none of the seeded values lies
  // within gradcheck's eps (1e-6) of the bounds -0.9 and 0.9 either.
  auto both = [](const Tensor& x) { return tg::clamp(x, -0.9, 0.9); };
  auto low = [](const Tensor& x) { return tg::clamp(x, 0.0, std::nullopt); };
  auto high = [](const Tensor& x) { return tg::clamp(x, std::nullopt, 0.0); };
  for (const auto& fn : {std::function<Tensor(const Tensor&)>(both), {low}, {high}}) {
    expect_gradchecks(fn, Domain::kAwayFromZero);
  }
}

TEST(ClampTest, BoundsAreInclusiveLikePyTorch) {
  // PyTorch: clamp([-1, 0, 0.5, 1, 2], 0, 1).grad = [0, 1, 1, 1, 0]; min only -> x >= 0,
  // max only -> x <= 1.
  const std::vector<double> x{-1, 0, 0.5, 1, 2};
  EXPECT_EQ(grad_of([](const Tensor& t) { return tg::clamp(t, 0.0, 1.0); }, x),
            (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_EQ(grad_of([](const Tensor& t) { return tg::clamp(t, 0.0, std::nullopt); }, x),
            (std::vector<double>{0, 1, 1, 1, 1}));
  EXPECT_EQ(grad_of([](const Tensor& t) { return tg::clamp(t, std::nullopt, 1.0); }, x),
            (std::vector<double>{1, 1, 1, 1, 0}));
  // min == max: only x equal to the bound passes
  EXPECT_EQ(grad_of([](const Tensor& t) { return tg::clamp(t, 0.5, 0.5); }, x),
            (std::vector<double>{0, 0, 1, 0, 0}));
  // infinite x passes a missing bound
  EXPECT_EQ(grad_of([](const Tensor& t) { return tg::clamp(t, std::nullopt, 1.0); }, {-kInf}),
            (std::vector<double>{1}));
}

TEST(ClampTest, BoundsAreComparedAtTheTensorsPrecision) {
  // float(0.1) > 0.1 as doubles, yet a float32 x of 0.1f sits exactly on the bound 0.1
  // (PyTorch: gradient 1, output unchanged).
  for (const tg::DType dtype : {tg::kFloat32, tg::kBFloat16, tg::kFloat16}) {
    SCOPED_TRACE(tg::dtype_name(dtype));
    Tensor x = tg::tensor({0.1f}).to(dtype).requires_grad_();
    Tensor y = tg::clamp(x, std::nullopt, 0.1);
    EXPECT_EQ(values(y), values(x));
    y.backward(tg::ones({1}, dtype));
    EXPECT_EQ(values(x.grad()), (std::vector<double>{1}));
    Tensor x2 = tg::tensor({0.1f}).to(dtype).requires_grad_();
    tg::clamp(x2, 0.1, std::nullopt).backward(tg::ones({1}, dtype));
    EXPECT_EQ(values(x2.grad()), (std::vector<double>{1}));
  }
}

// ---------------------------------------------------------------- errors and recording

TEST(UnaryErrorTest, RejectNonFloatingDtypes) {
  const Tensor i64 = tg::tensor({1, 2, 3}, {3});
  const Tensor b = tg::ones({2}, tg::kBool);
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops = {
      {"pow", [](const Tensor& x) { return tg::pow(x, 2.0); }},
      {"exp", [](const Tensor& x) { return tg::exp(x); }},
      {"log", [](const Tensor& x) { return tg::log(x); }},
      {"sqrt", [](const Tensor& x) { return tg::sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return tg::rsqrt(x); }},
      {"abs", [](const Tensor& x) { return tg::abs(x); }},
      {"clamp", [](const Tensor& x) { return tg::clamp(x, 0.0, 1.0); }},
  };
  for (const auto& [name, fn] : ops) {
    SCOPED_TRACE(name);
    EXPECT_TG_THROW(fn(i64), DTypeError, name + ":", "floating-point", "int64", "(3)");
    EXPECT_TG_THROW(fn(b), DTypeError, name + ":", "bool", "(2)");
    EXPECT_TG_THROW(fn(Tensor()), MisuseError, "undefined");
  }
}

TEST(UnaryErrorTest, ClampRejectsBadBounds) {
  const Tensor x = vec({1, 2});
  EXPECT_TG_THROW(tg::clamp(x, 3.0, 1.0), ValueError, "clamp:", "min (3)", "max (1)");
  EXPECT_TG_THROW(tg::clamp(x, 0.5, -0.25), ValueError, "clamp:", "0.5", "-0.25");
  EXPECT_TG_THROW(tg::clamp(x, std::nullopt, std::nullopt), ValueError,
                  "clamp:", "at least one of min and max");
  EXPECT_TG_THROW(tg::clamp(x, kNaN, 1.0), ValueError, "clamp:", "min is nan");
  EXPECT_TG_THROW(tg::clamp(x, std::nullopt, kNaN), ValueError, "clamp:", "max is nan");
}

TEST(UnaryTest, OpsRecordTheirNameAndCallingLine) {
  Tensor x = vec({1, 2}).requires_grad_();
  const int line = __LINE__ + 1;
  Tensor y = tg::sqrt(x);
  EXPECT_EQ(y.grad_fn()->name(), "sqrt");
  EXPECT_EQ(y.grad_fn()->where().line(), static_cast<uint32_t>(line));
  EXPECT_EQ(tg::pow(x, 2.0).grad_fn()->name(), "pow");
  EXPECT_EQ(tg::exp(x).grad_fn()->name(), "exp");
  EXPECT_EQ(tg::log(x).grad_fn()->name(), "log");
  EXPECT_EQ(tg::rsqrt(x).grad_fn()->name(), "rsqrt");
  EXPECT_EQ(tg::abs(x).grad_fn()->name(), "abs");
  EXPECT_EQ(tg::clamp(x, 0.0, 1.0).grad_fn()->name(), "clamp");
  EXPECT_EQ(tg::exp(vec({1})).grad_fn(), nullptr);  // no input requires grad
}

TEST(UnaryTest, ModifyingASavedOutputInPlaceIsCaught) {
  // exp saves its output for backward; changing it afterwards would corrupt the gradient.
  Tensor x = vec({1, 2}).requires_grad_();
  Tensor y = tg::exp(x);
  y.detach().fill_(0.0);  // same storage, so the saved output changes too
  EXPECT_TG_THROW(y.backward(tg::ones({2}, tg::kFloat64)), MisuseError, "exp");
}

}  // namespace
