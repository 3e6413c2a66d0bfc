// tests/ops/arithmetic_test.cpp — add, sub, mul, div, neg, the scalar forms and the operators.
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "test_util.h"

namespace {

using tg::Tensor;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }
// A 1-D float64 tensor (a braced list of doubles alone would pick the float32 overload).
Tensor vec(std::vector<double> v) { return tg::tensor(v); }

// A float64 tensor (not yet requiring grad): standard normal values, or values in
// [0.5, 3.5) when `positive` (for divisors, kept away from the pole at 0).
Tensor make(const tg::Shape& shape, tg::Generator& gen, bool positive = false) {
  Tensor t = tg::randn(shape, tg::kFloat64, gen);
  if (!positive) return t;
  std::vector<double> v = t.to_vector<double>();
  for (double& e : v) e = 0.5 + std::abs(e);
  return tg::tensor(v, shape);
}

struct BinaryCase {
  std::string name;
  Tensor a, b;
};

// Inputs for gradchecking a broadcasting binary op: float64 leaves covering equal shapes,
// broadcasting in either direction and on both sides, size-1 dims, a 0-d operand and
// non-contiguous leaves (transposed, strided slices, a column selected from a matrix).
std::vector<BinaryCase> binary_cases(bool positive_b) {
  tg::Generator gen(2024);
  auto b = [&](const tg::Shape& s) { return make(s, gen, positive_b); };
  auto a = [&](const tg::Shape& s) { return make(s, gen); };
  std::vector<BinaryCase> cases;
  cases.push_back({"same shape (2, 3)", a({2, 3}), b({2, 3})});
  cases.push_back({"(3, 1) with (4)", a({3, 1}), b({4})});
  cases.push_back({"(4) with (3, 1)", a({4}), b({3, 1})});
  cases.push_back({"(2, 3) with row (3)", a({2, 3}), b({3})});
  cases.push_back({"(1, 3, 1) with (2, 1, 4)", a({1, 3, 1}), b({2, 1, 4})});
  cases.push_back({"0-d with (2, 3)", a({}), b({2, 3})});
  cases.push_back({"(2, 3) with 0-d", a({2, 3}), b({})});
  cases.push_back(
      {"transposed (3, 4) with stepped slice (3, 4)", a({4, 3}).t(), b({3, 8}).slice(1, 0, 8, 2)});
  cases.push_back(
      {"transposed (3, 4) with strided column (4)", a({4, 3}).t(), b({4, 2}).select(1, 1)});
  for (auto& c : cases) {
    c.a.requires_grad_();
    c.b.requires_grad_();
  }
  return cases;
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&, tg::Here);

void expect_binary_gradchecks(BinaryFn fn, bool positive_b) {
  for (const BinaryCase& c : binary_cases(positive_b)) {
    SCOPED_TRACE(c.name);
    EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return fn(in[0], in[1], tg::Here()); },
                     {c.a, c.b});
  }
}

// Inputs for the one-tensor ops: several shapes, including 0-d and non-contiguous leaves.
std::vector<std::pair<std::string, Tensor>> unary_cases(bool positive) {
  tg::Generator gen(99);
  std::vector<std::pair<std::string, Tensor>> cases;
  cases.emplace_back("(5)", make({5}, gen, positive));
  cases.emplace_back("(2, 1, 3)", make({2, 1, 3}, gen, positive));
  cases.emplace_back("0-d", make({}, gen, positive));
  cases.emplace_back("transposed (3, 4)", make({4, 3}, gen, positive).t());
  cases.emplace_back("stepped slice (2, 3)", make({2, 6}, gen, positive).slice(1, 1, 6, 2));
  for (auto& c : cases) c.second.requires_grad_();
  return cases;
}

void expect_unary_gradchecks(const std::function<Tensor(const Tensor&)>& fn,
                             bool positive = false) {
  for (const auto& [name, x] : unary_cases(positive)) {
    SCOPED_TRACE(name);
    EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return fn(in[0]); }, {x});
  }
}

// (3, 1) column [1, 2, 3] and (4) row [10, 20, 30, 40]: each is stretched along the other's dim.
Tensor column() { return tg::tensor({1.0, 2.0, 3.0}, {3, 1}); }
Tensor row() { return tg::tensor({10.0, 20.0, 30.0, 40.0}, {4}); }

// ---------------------------------------------------------------- add

TEST(AddTest, ForwardAddsElementwise) {
  Tensor y = tg::add(tg::tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}),
                     tg::tensor({10.f, 20.f, 30.f, -40.f}, {2, 2}));
  EXPECT_EQ(y.dtype(), tg::kFloat32);
  EXPECT_EQ(y.shape(), (tg::Shape{2, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{11, 22, 33, -36}));
}

TEST(AddTest, ForwardBroadcastsBothWays) {
  const std::vector<double> expected{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43};
  Tensor y = tg::add(column(), row());
  EXPECT_EQ(y.shape(), (tg::Shape{3, 4}));
  EXPECT_EQ(values(y), expected);
  EXPECT_EQ(values(tg::add(row(), column())), expected);
}

TEST(AddTest, ForwardBroadcastsARowOverAMatrix) {
  Tensor m = tg::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  Tensor y = tg::add(m, tg::tensor({100.0, 200.0, 300.0}, {3}));
  EXPECT_EQ(y.shape(), (tg::Shape{2, 3}));
  EXPECT_EQ(values(y), (std::vector<double>{101, 202, 303, 104, 205, 306}));
}

TEST(AddTest, ForwardReadsNonContiguousOperands) {
  // base = [[1, 2, 3], [4, 5, 6]]; base.t() = [[1, 4], [2, 5], [3, 6]]
  Tensor base = tg::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  Tensor other = tg::tensor({10.0, 20.0, 30.0, 40.0, 50.0, 60.0}, {3, 2});
  ASSERT_FALSE(base.t().is_contiguous());
  EXPECT_EQ(values(tg::add(base.t(), other)), (std::vector<double>{11, 24, 32, 45, 53, 66}));
  // Every other column of a (2, 4): [[1, 3], [5, 7]] + [[1, 4], [2, 5]]^T ...
  Tensor wide = tg::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}, {2, 4});
  EXPECT_EQ(values(tg::add(wide.slice(1, 0, 4, 2), base.slice(1, 0, 2).t())),
            (std::vector<double>{2, 7, 7, 12}));
}

TEST(AddTest, BackwardSumsOverBroadcastDims) {
  Tensor a = column().requires_grad_();
  Tensor b = row().requires_grad_();
  Tensor dout = tg::arange(12, tg::kFloat64).reshape({3, 4});  // 0 .. 11
  tg::add(a, b).backward(dout);
  EXPECT_EQ(a.grad().shape(), (tg::Shape{3, 1}));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{6, 22, 38}));       // row sums
  EXPECT_EQ(values(b.grad()), (std::vector<double>{12, 15, 18, 21}));  // column sums
}

TEST(AddTest, Gradcheck) { expect_binary_gradchecks(&tg::add, false); }

TEST(AddTest, OnlyInputsThatRequireGradGetOne) {
  Tensor a = column().requires_grad_();
  Tensor b = row();
  tg::add(a, b).backward(tg::ones({3, 4}, tg::kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{4, 4, 4}));
  EXPECT_FALSE(b.grad().defined());
  EXPECT_EQ(tg::add(column(), row()).grad_fn(), nullptr);  // nothing to record
}

TEST(AddTest, HalfPrecisionRoundsOnStore) {
  // Near 2048 float16 has a spacing of 2, bfloat16 near 256 too: +1 is a tie, which rounds
  // to the even neighbour, the input.
  Tensor h = tg::tensor({2048.f, 1.5f}).to(tg::kFloat16);
  EXPECT_EQ(values(tg::add(h, tg::ones({2}, tg::kFloat16))), (std::vector<double>{2048, 2.5}));
  Tensor b = tg::tensor({256.f, 1.5f}).to(tg::kBFloat16);
  EXPECT_EQ(values(tg::add(b, 1.0)), (std::vector<double>{256, 2.5}));
  EXPECT_EQ(tg::add(b, 1.0).dtype(), tg::kBFloat16);
}

// ---------------------------------------------------------------- sub

TEST(SubTest, ForwardSubtractsAndBroadcastsBothWays) {
  EXPECT_EQ(tg::sub(tg::tensor({5.f, 1.f}), tg::tensor({2.f, 4.f})).to_vector<float>(),
            (std::vector<float>{3, -3}));
  EXPECT_EQ(values(tg::sub(column(), row())),
            (std::vector<double>{-9, -19, -29, -39, -8, -18, -28, -38, -7, -17, -27, -37}));
  EXPECT_EQ(values(tg::sub(row(), column())),
            (std::vector<double>{9, 19, 29, 39, 8, 18, 28, 38, 7, 17, 27, 37}));
}

TEST(SubTest, BackwardNegatesTheSecondInputsGradient) {
  Tensor a = column().requires_grad_();
  Tensor b = row().requires_grad_();
  tg::sub(a, b).backward(tg::arange(12, tg::kFloat64).reshape({3, 4}));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{6, 22, 38}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{-12, -15, -18, -21}));
}

TEST(SubTest, Gradcheck) { expect_binary_gradchecks(&tg::sub, false); }

TEST(SubTest, SelfMinusSelfHasZeroGradient) {
  Tensor x = vec({1.0, -2.0}).requires_grad_();
  tg::sub(x, x).backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0}));
}

// ---------------------------------------------------------------- mul

TEST(MulTest, ForwardMultipliesAndBroadcastsBothWays) {
  EXPECT_EQ(tg::mul(tg::tensor({1.5f, -2.f}), tg::tensor({4.f, 3.f})).to_vector<float>(),
            (std::vector<float>{6, -6}));
  const std::vector<double> expected{10, 20, 30, 40, 20, 40, 60, 80, 30, 60, 90, 120};
  EXPECT_EQ(values(tg::mul(column(), row())), expected);
  EXPECT_EQ(values(tg::mul(row(), column())), expected);
  Tensor m = tg::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  EXPECT_EQ(values(tg::mul(m, tg::tensor({1.0, 0.5, -1.0}, {3}))),
            (std::vector<double>{1, 1, -3, 4, 2.5, -6}));
}

TEST(MulTest, BackwardMultipliesByTheOtherInputAndSums) {
  Tensor a = column().requires_grad_();
  Tensor b = row().requires_grad_();
  tg::mul(a, b).backward(tg::ones({3, 4}, tg::kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{100, 100, 100}));  // sum of the row
  EXPECT_EQ(values(b.grad()), (std::vector<double>{6, 6, 6, 6}));     // sum of the column
}

TEST(MulTest, Gradcheck) { expect_binary_gradchecks(&tg::mul, false); }

TEST(MulTest, SquaringThroughBothSlotsAccumulates) {
  Tensor x = vec({3.0, -0.5}).requires_grad_();
  tg::mul(x, x).backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{6, -1}));  // d(x^2)/dx = 2x
}

// ---------------------------------------------------------------- div

TEST(DivTest, ForwardDividesAndBroadcastsBothWays) {
  EXPECT_EQ(tg::div(tg::tensor({1.f, -3.f}), tg::tensor({4.f, 2.f})).to_vector<float>(),
            (std::vector<float>{0.25f, -1.5f}));
  EXPECT_EQ(values(tg::div(tg::tensor({2.0, 4.0}, {2, 1}), tg::tensor({1.0, 2.0, 8.0}, {3}))),
            (std::vector<double>{2, 1, 0.25, 4, 2, 0.5}));
  EXPECT_EQ(values(tg::div(tg::tensor({1.0, 2.0, 8.0}, {3}), tg::tensor({2.0, 4.0}, {2, 1}))),
            (std::vector<double>{0.5, 1, 4, 0.25, 0.5, 2}));
}

TEST(DivTest, BackwardByHand) {
  // out = a / b with a = [3, 1], b = [2, 4]: da = 1/b = [0.5, 0.25],
  // db = -a/b^2 = [-0.75, -0.0625].
  Tensor a = vec({3.0, 1.0}).requires_grad_();
  Tensor b = vec({2.0, 4.0}).requires_grad_();
  tg::div(a, b).backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{-0.75, -0.0625}));
}

TEST(DivTest, Gradcheck) { expect_binary_gradchecks(&tg::div, /*positive_b=*/true); }

TEST(DivTest, OnlyTheDivisorRequiresGrad) {
  Tensor a = vec({3.0, 1.0});
  Tensor b = vec({2.0, 4.0}).requires_grad_();
  tg::div(a, b).backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{-0.75, -0.0625}));
  EXPECT_FALSE(a.grad().defined());
}

TEST(DivTest, SavesItsOutputOnlyWhenTheDivisorNeedsAGradient) {
  // da = dout / b needs only b; db = -(dout / b) * out also needs the output. Overwriting the
  // output (through a detached alias) is caught only when the backward would read it.
  Tensor a = vec({3.0, 1.0}).requires_grad_();
  Tensor y = tg::div(a, vec({2.0, 4.0}));
  y.detach().fill_(7.0);
  y.backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{0.5, 0.25}));

  Tensor b = vec({2.0, 4.0}).requires_grad_();
  Tensor z = tg::div(vec({3.0, 1.0}), b);
  z.detach().fill_(7.0);
  EXPECT_TG_THROW(z.backward(tg::ones({2}, tg::kFloat64)), MisuseError, "div");
}

TEST(DivTest, DivisionByZeroFollowsIeeeLikePyTorch) {
  // PyTorch: a = [1, 0], b = [0, 0] -> out [inf, nan], a.grad [inf, inf], b.grad [-inf, nan].
  Tensor a = vec({1.0, 0.0}).requires_grad_();
  Tensor b = vec({0.0, 0.0}).requires_grad_();
  Tensor y = tg::div(a, b);
  EXPECT_EQ(y.at<double>({0}), kInf);
  EXPECT_TRUE(std::isnan(y.at<double>({1})));
  y.backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{kInf, kInf}));
  EXPECT_EQ(b.grad().at<double>({0}), -kInf);
  EXPECT_TRUE(std::isnan(b.grad().at<double>({1})));
}

TEST(DivTest, HalfPrecisionForwardValues) {
  // 1/3 and 2/3 rounded to 11 (float16) and 8 (bfloat16) significant bits, as PyTorch gives.
  Tensor h = tg::tensor({1.f, 2.f, 3.f}).to(tg::kFloat16);
  EXPECT_EQ(values(tg::div(h, tg::full({3}, 3.0, tg::kFloat16))),
            (std::vector<double>{0.333251953125, 0.66650390625, 1.0}));
  Tensor b = tg::tensor({1.f, 2.f, 3.f}).to(tg::kBFloat16);
  EXPECT_EQ(values(tg::div(b, 3.0)), (std::vector<double>{0.333984375, 0.66796875, 1.0}));
  EXPECT_EQ(values(tg::div(1.0, b)), (std::vector<double>{1.0, 0.5, 0.333984375}));
}

// ---------------------------------------------------------------- neg

TEST(NegTest, ForwardAndBackward) {
  Tensor x = vec({1.0, -2.5, 0.0}).requires_grad_();
  Tensor y = tg::neg(x);
  EXPECT_EQ(values(y), (std::vector<double>{-1, 2.5, 0}));
  EXPECT_TRUE(std::signbit(y.at<double>({2})));  // -0.0, as IEEE negation gives
  y.backward(vec({1.0, 2.0, 3.0}));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ(tg::neg(tg::tensor({1.5f})).to_vector<float>(), (std::vector<float>{-1.5f}));
}

TEST(NegTest, Gradcheck) {
  expect_unary_gradchecks([](const Tensor& x) { return tg::neg(x); });
}

// ---------------------------------------------------------------- scalar forms

TEST(ScalarTest, ForwardValues) {
  Tensor x = vec({1.0, -2.0, 4.0});
  EXPECT_EQ(values(tg::add(x, 0.5)), (std::vector<double>{1.5, -1.5, 4.5}));
  EXPECT_EQ(values(tg::sub(x, 0.5)), (std::vector<double>{0.5, -2.5, 3.5}));
  EXPECT_EQ(values(tg::sub(0.5, x)), (std::vector<double>{-0.5, 2.5, -3.5}));
  EXPECT_EQ(values(tg::mul(x, -3.0)), (std::vector<double>{-3, 6, -12}));
  EXPECT_EQ(values(tg::div(x, 4.0)), (std::vector<double>{0.25, -0.5, 1}));
  EXPECT_EQ(values(tg::div(2.0, x)), (std::vector<double>{2, -1, 0.5}));
  EXPECT_EQ(tg::div(2.0, x).shape(), x.shape());
}

TEST(ScalarTest, Float32ComputesWithTheScalarRoundedToFloat) {
  // 0.1 becomes 0.1f, and the product is rounded to float: the same bits as 3.f * 0.1f.
  Tensor x = tg::tensor({3.f, 1.f});
  EXPECT_EQ(tg::mul(x, 0.1).to_vector<float>(), (std::vector<float>{3.f * 0.1f, 0.1f}));
  EXPECT_EQ(tg::div(x, 3.0).to_vector<float>(), (std::vector<float>{1.f, 1.f / 3.f}));
  EXPECT_EQ(tg::sub(1.0, x).to_vector<float>(), (std::vector<float>{-2.f, 0.f}));
  EXPECT_EQ(tg::add(x, 0.25).dtype(), tg::kFloat32);
}

TEST(ScalarTest, BackwardByHand) {
  Tensor x = vec({1.0, -2.0, 4.0}).requires_grad_();
  Tensor dout = vec({1.0, 2.0, 3.0});
  auto grad_of = [&](const Tensor& y) { return values(tg::grad({y}, {x}, {dout})[0]); };
  EXPECT_EQ(grad_of(tg::add(x, 5.0)), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(grad_of(tg::sub(x, 5.0)), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(grad_of(tg::sub(5.0, x)), (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ(grad_of(tg::mul(x, 3.0)), (std::vector<double>{3, 6, 9}));
  EXPECT_EQ(grad_of(tg::div(x, 4.0)), (std::vector<double>{0.25, 0.5, 0.75}));
  // d(2/x)/dx = -2/x^2 = [-2, -0.5, -0.125], times dout
  EXPECT_EQ(grad_of(tg::div(2.0, x)), (std::vector<double>{-2, -1, -0.375}));
}

TEST(ScalarTest, Gradcheck) {
  {
    SCOPED_TRACE("add");
    expect_unary_gradchecks([](const Tensor& x) { return tg::add(x, 1.5); });
  }
  {
    SCOPED_TRACE("sub");
    expect_unary_gradchecks([](const Tensor& x) { return tg::sub(x, 1.5); });
  }
  {
    SCOPED_TRACE("rsub");
    expect_unary_gradchecks([](const Tensor& x) { return tg::sub(1.5, x); });
  }
  {
    SCOPED_TRACE("mul");
    expect_unary_gradchecks([](const Tensor& x) { return tg::mul(x, -2.5); });
  }
  {
    SCOPED_TRACE("div");
    expect_unary_gradchecks([](const Tensor& x) { return tg::div(x, -2.5); });
  }
  {
    SCOPED_TRACE("rdiv");
    expect_unary_gradchecks([](const Tensor& x) { return tg::div(-2.5, x); }, /*positive=*/true);
  }
}

TEST(ScalarTest, ReciprocalAtZeroMatchesPyTorch) {
  // PyTorch: x = [0, 2]: (1/x).grad = [-inf, -0.25]; (0/x).grad = [nan, -0].
  Tensor x = vec({0.0, 2.0}).requires_grad_();
  const Tensor ones = tg::ones({2}, tg::kFloat64);
  EXPECT_EQ(values(tg::div(1.0, x)), (std::vector<double>{kInf, 0.5}));
  EXPECT_EQ(values(tg::grad({tg::div(1.0, x)}, {x}, {ones})[0]),
            (std::vector<double>{-kInf, -0.25}));
  const std::vector<double> g = values(tg::grad({tg::div(0.0, x)}, {x}, {ones})[0]);
  EXPECT_TRUE(std::isnan(g[0]));
  EXPECT_EQ(g[1], 0.0);
  EXPECT_TRUE(std::signbit(g[1]));
}

TEST(ScalarTest, NodesAreNamedAfterTheirFunction) {
  Tensor x = vec({1.0}).requires_grad_();
  EXPECT_EQ(tg::add(x, 1.0).grad_fn()->name(), "add_scalar");
  EXPECT_EQ(tg::sub(x, 1.0).grad_fn()->name(), "sub_scalar");
  EXPECT_EQ(tg::sub(1.0, x).grad_fn()->name(), "rsub_scalar");
  EXPECT_EQ(tg::mul(x, 1.0).grad_fn()->name(), "mul_scalar");
  EXPECT_EQ(tg::div(x, 1.0).grad_fn()->name(), "div_scalar");
  EXPECT_EQ(tg::div(1.0, x).grad_fn()->name(), "rdiv_scalar");
  EXPECT_EQ(tg::neg(x).grad_fn()->name(), "neg");
  EXPECT_EQ(tg::sub(x, x).grad_fn()->name(), "sub");
  EXPECT_EQ(tg::div(x, x).grad_fn()->name(), "div");
}

// ---------------------------------------------------------------- operators

TEST(OperatorTest, ComputeWhatTheNamedFunctionsDo) {
  Tensor a = vec({6.0, -2.0});
  Tensor b = vec({3.0, 4.0});
  EXPECT_EQ(values(a + b), (std::vector<double>{9, 2}));
  EXPECT_EQ(values(a - b), (std::vector<double>{3, -6}));
  EXPECT_EQ(values(a * b), (std::vector<double>{18, -8}));
  EXPECT_EQ(values(a / b), (std::vector<double>{2, -0.5}));
  EXPECT_EQ(values(a + 1.0), (std::vector<double>{7, -1}));
  EXPECT_EQ(values(a - 1.0), (std::vector<double>{5, -3}));
  EXPECT_EQ(values(a * 2), (std::vector<double>{12, -4}));  // an int converts to double
  EXPECT_EQ(values(a / 2.0), (std::vector<double>{3, -1}));
  EXPECT_EQ(values(1.0 + a), (std::vector<double>{7, -1}));
  EXPECT_EQ(values(1.0 - a), (std::vector<double>{-5, 3}));
  EXPECT_EQ(values(2.0 * a), (std::vector<double>{12, -4}));
  EXPECT_EQ(values(12.0 / a), (std::vector<double>{2, -6}));
  EXPECT_EQ(values(-a), (std::vector<double>{-6, 2}));
  // Precedence and chaining work as for numbers: 1 - 2 * a / b + -a
  EXPECT_EQ(values(1.0 - 2.0 * a / b + -a), (std::vector<double>{-9, 4}));
}

TEST(OperatorTest, RecordsTheCallingLine) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor w = vec({3.0, 4.0}).requires_grad_();
  const int line = __LINE__ + 1;
  tg::Tensor y = x * w;
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "mul");
  EXPECT_EQ(y.grad_fn()->where().line(), static_cast<uint32_t>(line));
  EXPECT_THAT(std::string(y.grad_fn()->where().file_name()),
              ::testing::EndsWith("arithmetic_test.cpp"));
}

TEST(OperatorTest, EveryOperatorRecordsTheCallingLine) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  Tensor w = vec({3.0, 4.0}).requires_grad_();
  // Each pair is built on one line, so __LINE__ is the line of the operator.
  const std::vector<std::pair<Tensor, int>> cases = {
      {x + w, __LINE__},   {x - w, __LINE__},   {x * w, __LINE__},   {x / w, __LINE__},
      {x + 1.0, __LINE__}, {x - 1.0, __LINE__}, {x * 2.0, __LINE__}, {x / 2.0, __LINE__},
      {1.0 + x, __LINE__}, {1.0 - x, __LINE__}, {2.0 * x, __LINE__}, {2.0 / x, __LINE__},
      {-x, __LINE__},
  };
  for (const auto& [y, line] : cases) {
    SCOPED_TRACE(std::string(y.grad_fn()->name()));
    EXPECT_EQ(y.grad_fn()->where().line(), static_cast<uint32_t>(line));
  }
}

TEST(OperatorTest, NamedFunctionsRecordTheCallingLineToo) {
  Tensor x = vec({1.0, 2.0}).requires_grad_();
  const int line = __LINE__ + 1;
  Tensor y = tg::sub(x, x);
  EXPECT_EQ(y.grad_fn()->where().line(), static_cast<uint32_t>(line));
  const int line2 = __LINE__ + 1;
  Tensor z = tg::div(1.0, x);
  EXPECT_EQ(z.grad_fn()->where().line(), static_cast<uint32_t>(line2));
}

TEST(OperatorTest, GradcheckThroughAnExpression) {
  // y = (a - b) * (a + 2) / b - 1 / a with broadcasting: (3, 1) against (4).
  tg::Generator gen(5);
  Tensor a = make({3, 1}, gen, true).requires_grad_();
  Tensor b = make({4}, gen, true).requires_grad_();
  EXPECT_GRADCHECK(
      [](const std::vector<Tensor>& in) {
        const Tensor &p = in[0], &q = in[1];
        return (p - q) * (p + 2.0) / q - 1.0 / p;
      },
      {a, b});
}

// ---------------------------------------------------------------- errors

TEST(ArithmeticErrorTest, BinaryOpsRejectNonFloatingMixedAndNonBroadcastable) {
  const Tensor f32 = tg::ones({2, 3});
  const Tensor f64 = tg::ones({2, 3}, tg::kFloat64);
  const Tensor i64 = tg::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = tg::ones({2, 3}, tg::kBool);
  const std::vector<std::pair<std::string, BinaryFn>> ops = {
      {"add", &tg::add}, {"sub", &tg::sub}, {"mul", &tg::mul}, {"div", &tg::div}};
  for (const auto& [name, fn] : ops) {
    SCOPED_TRACE(name);
    const std::string op = name + ":";
    EXPECT_TG_THROW(fn(i64, f32, tg::Here()), DTypeError, op, "floating-point", "int64", "(2, 3)");
    EXPECT_TG_THROW(fn(f32, i64, tg::Here()), DTypeError, op, "int64");
    EXPECT_TG_THROW(fn(f32, b, tg::Here()), DTypeError, op, "bool");
    EXPECT_TG_THROW(fn(f32, f64, tg::Here()), DTypeError, op, "different dtypes", "float32",
                    "float64");
    EXPECT_TG_THROW(fn(f32, tg::ones({4}), tg::Here()), ShapeError, op, "(2, 3)", "(4)",
                    "not broadcastable");
    EXPECT_TG_THROW(fn(tg::ones({2, 5}), tg::ones({3, 2, 4}), tg::Here()), ShapeError, op, "(2, 5)",
                    "(3, 2, 4)", "5 vs 4");
  }
}

TEST(ArithmeticErrorTest, OperatorsReportTheSameErrors) {
  const Tensor f32 = tg::ones({2, 3});
  EXPECT_TG_THROW(f32 * tg::ones({2, 3}, tg::kFloat64), DTypeError, "mul:", "float32", "float64");
  EXPECT_TG_THROW(f32 - tg::ones({3, 2}), ShapeError, "sub:", "(2, 3)", "(3, 2)");
  EXPECT_TG_THROW(-tg::tensor({1, 2}, {2}), DTypeError, "neg:", "int64");
}

TEST(ArithmeticErrorTest, ScalarFormsRejectNonFloating) {
  const Tensor i64 = tg::tensor({1, 2}, {2});
  EXPECT_TG_THROW(tg::add(i64, 1.0), DTypeError, "add:", "int64", "(2)");
  EXPECT_TG_THROW(tg::sub(i64, 1.0), DTypeError, "sub:", "int64");
  EXPECT_TG_THROW(tg::sub(1.0, i64), DTypeError, "sub:", "int64");
  EXPECT_TG_THROW(tg::mul(i64, 2.0), DTypeError, "mul:", "int64");
  EXPECT_TG_THROW(tg::div(i64, 2.0), DTypeError, "div:", "int64");
  EXPECT_TG_THROW(tg::div(2.0, i64), DTypeError, "div:", "int64");
  EXPECT_TG_THROW(tg::neg(tg::ones({2}, tg::kBool)), DTypeError, "neg:", "bool");
  EXPECT_TG_THROW(1.0 / i64, DTypeError, "div:", "int64");
}

TEST(ArithmeticErrorTest, UndefinedTensorIsMisuse) {
  EXPECT_TG_THROW(tg::add(Tensor(), tg::ones({2})), MisuseError, "undefined");
  EXPECT_TG_THROW(tg::mul(Tensor(), 2.0), MisuseError, "undefined");
}

}  // namespace
