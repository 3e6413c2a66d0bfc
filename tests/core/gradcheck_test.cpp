// tests/core/gradcheck_test.cpp — gradcheck must pass right backwards and catch wrong ones.
#include <cmath>

#include "test_util.h"

namespace {

using tg::Context;
using tg::Function;
using tg::Tensor;

// y = x^3 elementwise, with a backward that can be broken in chosen ways.
enum class Bug { kNone, kFactorTwo, kOneElement, kEmptySlot };
template <Bug kBug>
struct Cube : Function<Cube<kBug>> {
  static constexpr std::string_view kName = "cube";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    Tensor c = x.contiguous(), out = tg::empty_like(x);
    for (int64_t i = 0; i < x.numel(); ++i)
      out.data<double>()[i] = std::pow(c.data<double>()[i], 3);
    return out;
  }
  // forward was: y = x^3, so dx = 3 x^2 * dy
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    if (kBug == Bug::kEmptySlot) return {Tensor()};
    const Tensor x = ctx.saved_tensors()[0].contiguous(), dy = g[0].contiguous();
    Tensor dx = tg::empty_like(x);
    for (int64_t i = 0; i < x.numel(); ++i) {
      double d = 3 * x.data<double>()[i] * x.data<double>()[i] * dy.data<double>()[i];
      if (kBug == Bug::kFactorTwo) d *= 2;
      if (kBug == Bug::kOneElement && i == 4) d += 0.5;
      dx.data<double>()[i] = d;
    }
    return {dx};
  }
};

template <Bug kBug>
Tensor cube(const std::vector<Tensor>& in) {
  return Cube<kBug>::apply(in[0]);
}

Tensor leaf(const tg::Shape& shape, uint64_t seed) {
  tg::Generator gen(seed);
  return tg::randn(shape, tg::kFloat64, gen).requires_grad_();
}

TEST(GradcheckTest, PassesACorrectBackward) {
  EXPECT_GRADCHECK(cube<Bug::kNone>, {leaf({2, 3}, 1)});
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return in[0] * in[1] + in[0]; },
                   {leaf({2, 1}, 2), leaf({3}, 3)});
}

TEST(GradcheckTest, PassesOnANonContiguousInput) {
  tg::Generator gen(4);
  Tensor x = tg::randn({4, 3}, tg::kFloat64, gen).t().requires_grad_();
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_GRADCHECK(cube<Bug::kNone>, {x});
}

TEST(GradcheckTest, CatchesAWrongFactorCountsEveryElementAndListsTheWorst) {
  const auto r = tg::gradcheck(cube<Bug::kFactorTwo>, {leaf({2, 3}, 5)});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.checked, 6);
  EXPECT_EQ(r.failed, 6);
  ASSERT_EQ(r.worst.size(), 5u);  // max_listed
  for (size_t k = 1; k < r.worst.size(); ++k) {
    EXPECT_GE(r.worst[k - 1].error / r.worst[k - 1].tolerance,
              r.worst[k].error / r.worst[k].tolerance);
  }
  // A factor of two: analytic is twice numeric, in every listed element.
  for (const auto& e : r.worst) EXPECT_NEAR(e.analytic, 2 * e.numeric, 1e-6 * std::abs(e.numeric));
  EXPECT_THAT(r.message, tg::testing::MessageHas("6 of 6 elements", "input 0 (shape (2, 3))",
                                                 r.worst[0].where, "analytic", "numeric",
                                                 "atol 1e-05", "rtol 0.001", "the worst 5 first"));
}

TEST(GradcheckTest, CatchesASingleWrongElement) {
  const auto r = tg::gradcheck(cube<Bug::kOneElement>, {leaf({2, 3}, 6)});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failed, 1);
  ASSERT_EQ(r.worst.size(), 1u);
  EXPECT_EQ(r.worst[0].element, 4);
  EXPECT_EQ(r.worst[0].where, "element 4 (index (1, 1))");
  EXPECT_NEAR(r.worst[0].analytic - r.worst[0].numeric, 0.5, 1e-6);
  EXPECT_THAT(r.message, tg::testing::MessageHas("1 of 6 elements checked disagrees",
                                                 "element 4 (index (1, 1))"));
}

TEST(GradcheckTest, ReportsAnInputThatGotNoGradient) {
  const auto r = tg::gradcheck(cube<Bug::kEmptySlot>, {leaf({3}, 7)});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.no_gradient, std::vector<size_t>{0});
  EXPECT_THAT(r.message, tg::testing::MessageHas("input 0", "got no gradient"));
  // An input the output does not depend on is reported the same way; the other is checked.
  const auto unused = tg::gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[0]; },
                                    {leaf({2}, 8), leaf({2}, 9)});
  EXPECT_FALSE(unused.ok);
  EXPECT_EQ(unused.no_gradient, std::vector<size_t>{1});
  EXPECT_EQ(unused.checked, 2);
  EXPECT_EQ(unused.failed, 0);
  EXPECT_THAT(unused.message, tg::testing::MessageHas("input 1", "got no gradient"));
}

TEST(GradcheckTest, RefusesToPassVacuously) {
  // An empty output compares nothing: any backward would "pass".
  EXPECT_TG_THROW(tg::gradcheck([](const std::vector<Tensor>& in) { return in[0].narrow(0, 0, 0); },
                                {leaf({3}, 1)}),
                  ValueError, "gradcheck", "empty tensor of shape (0)");
  EXPECT_TG_THROW(
      tg::gradcheck([](const std::vector<Tensor>&) { return Tensor(); }, {leaf({3}, 1)}),
      MisuseError, "gradcheck", "undefined tensor");
  EXPECT_TG_THROW(
      tg::gradcheck([](const std::vector<Tensor>& in) { return in[0].detach(); }, {leaf({3}, 1)}),
      MisuseError, "gradcheck", "shape (3)", "does not require grad");
  // Every input that requires grad is empty.
  EXPECT_TG_THROW(tg::gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[1]; },
                                {leaf({0}, 1), tg::ones({1}, tg::kFloat64)}),
                  ValueError, "gradcheck", "empty (0 elements)");
}

// relu(x) = max(x, 0) with the slope it uses at 0 as a parameter (0 is PyTorch's choice).
template <int kSlopeAtZero>
struct Relu : Function<Relu<kSlopeAtZero>> {
  static constexpr std::string_view kName = "relu";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    Tensor y = x.contiguous().clone();
    for (int64_t i = 0; i < y.numel(); ++i)
      y.data<double>()[i] = std::max(y.data<double>()[i], 0.0);
    return y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0].contiguous();
    Tensor dx = g[0].contiguous().clone();
    for (int64_t i = 0; i < dx.numel(); ++i) {
      const double v = x.data<double>()[i];
      dx.data<double>()[i] *= v > 0 ? 1.0 : v < 0 ? 0.0 : kSlopeAtZero;
    }
    return {dx};
  }
};

template <int kSlopeAtZero>
Tensor relu(const std::vector<Tensor>& in) {
  return Relu<kSlopeAtZero>::apply(in[0]);
}

TEST(GradcheckTest, AKinkIsReportedApartWithTheSubGradientChosen) {
  // Elements 1 and 3 sit on the kink and within eps of it; 0 and 2 are far from it.
  const Tensor x = tg::tensor(std::vector<double>{-1.0, 0.0, 2.0, 4e-7}).requires_grad_();
  const auto r = tg::gradcheck(relu<0>, {x});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.kinks, 2);
  ASSERT_EQ(r.at_kinks.size(), 2u);
  const auto& on = r.at_kinks[0];
  EXPECT_EQ(on.element, 1);
  EXPECT_TRUE(on.at_kink);
  EXPECT_EQ(on.analytic, 0.0);  // the sub-gradient relu chose
  EXPECT_NEAR(on.left, 0.0, 1e-9);
  const auto& near = r.at_kinks[1];  // 4e-7: the step straddles the kink
  EXPECT_EQ(near.element, 3);
  EXPECT_NEAR(near.left, 0.4 * near.right, 1e-6);  // 4e-7 of the 1e-6 step on the slope
  EXPECT_NEAR(near.analytic, near.right, 1e-9);
  EXPECT_THAT(r.message, tg::testing::MessageHas("2 elements at a kink", "element 1 (index (1))",
                                                 "the backward chose"));
  // Any value between the slopes is a sub-gradient; 2 is not, and fails, at the kink.
  EXPECT_GRADCHECK(relu<1>, {x});
  const Tensor at_zero = tg::zeros({1}, tg::kFloat64).requires_grad_();
  const auto bad = tg::gradcheck(relu<2>, {at_zero});
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.failed, 1);
  EXPECT_EQ(bad.kinks, 1);
  ASSERT_EQ(bad.worst.size(), 1u);
  EXPECT_TRUE(bad.worst[0].at_kink);
  EXPECT_THAT(bad.message,
              tg::testing::MessageHas("at a kink", "is not between the one-sided slopes"));
}

// y = log(x): a smooth curve so steep near 0 that its one-sided slopes differ by far more
// than the tolerance. The jump doubles with the step there, so it is no kink.
struct Log : Function<Log> {
  static constexpr std::string_view kName = "log";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    Tensor y = x.contiguous().clone();
    for (int64_t i = 0; i < y.numel(); ++i) y.data<double>()[i] = std::log(y.data<double>()[i]);
    return y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0].contiguous();
    Tensor dx = g[0].contiguous().clone();
    for (int64_t i = 0; i < dx.numel(); ++i) dx.data<double>()[i] /= x.data<double>()[i];
    return {dx};
  }
};

TEST(GradcheckTest, ASteepCurveIsNoKink) {
  const Tensor x = tg::tensor(std::vector<double>{1e-4, 3e-4}).requires_grad_();
  const auto r =
      tg::gradcheck([](const std::vector<Tensor>& in) { return Log::apply(in[0]); }, {x});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.kinks, 0);
  EXPECT_TRUE(r.message.empty()) << r.message;
}

TEST(GradcheckTest, FastModeChecksDirectionsAndCatchesOneWrongElementOfMany) {
  tg::GradcheckOptions opt;
  opt.fast_mode = true;
  const Tensor x = leaf({20, 30}, 10);
  const auto good = tg::gradcheck(cube<Bug::kNone>, {x}, opt);
  EXPECT_TRUE(good.ok) << good.message;
  EXPECT_EQ(good.checked, 3);  // directions, not 600 elements
  // One wrong element of 600: element-wise sampling of 10 misses it with this seed, while
  // every random direction sees it.
  tg::GradcheckOptions sampled;
  sampled.max_elements_per_input = 10;
  EXPECT_GRADCHECK(cube<Bug::kOneElement>, {x}, sampled);
  const auto bad = tg::gradcheck(cube<Bug::kOneElement>, {x}, opt);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.failed, 3);
  EXPECT_THAT(bad.message, tg::testing::MessageHas("3 of 3 directions", "direction 1 of 3"));
}

// x^3 again, for any floating dtype, with a float32 backward that is off by a factor
// (1 + kFloat32ErrorPercent / 100): the kind of bug only a lower-precision kernel has.
template <int kFloat32ErrorPercent>
struct AnyCube : Function<AnyCube<kFloat32ErrorPercent>> {
  static constexpr std::string_view kName = "cube";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    Tensor y = x.to(tg::kFloat64);
    for (int64_t i = 0; i < y.numel(); ++i) y.data<double>()[i] = std::pow(y.data<double>()[i], 3);
    return y.to(x.dtype());
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor saved = ctx.saved_tensors()[0], x = saved.to(tg::kFloat64);
    const double bug = saved.dtype() == tg::kFloat32 ? 1 + kFloat32ErrorPercent / 100.0 : 1.0;
    Tensor dx = g[0].to(tg::kFloat64);
    for (int64_t i = 0; i < dx.numel(); ++i)
      dx.data<double>()[i] *= 3 * std::pow(x.data<double>()[i], 2) * bug;
    return {dx.to(ctx.saved_tensors()[0].dtype())};
  }
};

template <int kErr>
Tensor any_cube(const std::vector<Tensor>& in) {
  return AnyCube<kErr>::apply(in[0]);
}

TEST(GradcheckTest, AFloat32InputIsCheckedThroughAFloat64Copy) {
  tg::Generator gen(13);
  Tensor x = tg::randn({2, 3}, tg::kFloat32, gen).requires_grad_();
  const auto before = x.to_vector<float>();
  const auto r = tg::gradcheck(any_cube<0>, {x});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.checked, 6);
  EXPECT_EQ(x.to_vector<float>(), before);
  EXPECT_FALSE(x.grad().defined());
  // A float32 backward that is 1% off passes the float64 check but not the comparison.
  const auto bad = tg::gradcheck(any_cube<1>, {x});
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.failed, 0);
  EXPECT_GT(bad.low_precision_failed, 0);
  EXPECT_THAT(bad.message, tg::testing::MessageHas("input 0 (float32, shape (2, 3))", "float64",
                                                   "its own backward"));
  tg::GradcheckOptions no_compare;
  no_compare.check_low_precision = false;
  EXPECT_GRADCHECK(any_cube<1>, {x}, no_compare);
}

TEST(GradcheckTest, CatchesErrorsInSampledLargeInputs) {
  tg::GradcheckOptions opt;
  opt.max_elements_per_input = 10;  // of 600
  EXPECT_GRADCHECK(cube<Bug::kNone>, {leaf({20, 30}, 10)}, opt);
  EXPECT_FALSE(tg::gradcheck(cube<Bug::kFactorTwo>, {leaf({20, 30}, 10)}, opt).ok);
}

TEST(GradcheckTest, FourPointStencilIsMoreAccurate) {
  // For x^3 the central difference is off by exactly eps^2 * (x^3)''' / 6 = eps^2 per
  // unit of upstream gradient; the 4-point stencil has no error term for a cubic.
  tg::GradcheckOptions opt;
  opt.eps = 1e-3;
  opt.atol = 1e-8;
  opt.rtol = 0;
  const Tensor x = leaf({5}, 11);
  EXPECT_FALSE(tg::gradcheck(cube<Bug::kNone>, {x}, opt).ok);
  opt.four_point = true;
  EXPECT_GRADCHECK(cube<Bug::kNone>, {x}, opt);
}

TEST(GradcheckTest, LeavesTheInputsAsTheyWere) {
  Tensor x = leaf({6}, 12);
  const auto before = x.to_vector<double>();
  EXPECT_GRADCHECK(cube<Bug::kNone>, {x});
  EXPECT_EQ(x.to_vector<double>(), before);
  EXPECT_FALSE(x.grad().defined());  // gradcheck uses tg::grad, never .grad
}

TEST(GradcheckTest, RejectsInputsAndOptionsItCannotUse) {
  EXPECT_TG_THROW(tg::gradcheck(cube<Bug::kNone>, {tg::ones({2}, tg::kFloat64)}), MisuseError,
                  "gradcheck", "no input requires grad");
  tg::GradcheckOptions bad;
  bad.eps = 0;
  EXPECT_TG_THROW(tg::gradcheck(cube<Bug::kNone>, {leaf({2}, 1)}, bad), ValueError, "eps", "0");
  const Tensor y = cube<Bug::kNone>({leaf({2}, 1)});
  EXPECT_TG_THROW(tg::gradcheck(cube<Bug::kNone>, {y}), MisuseError, "input 0", "not a leaf");
  tg::GradcheckOptions no_directions;
  no_directions.fast_mode = true;
  no_directions.directions = 0;
  EXPECT_TG_THROW(tg::gradcheck(cube<Bug::kNone>, {leaf({2}, 1)}, no_directions), ValueError,
                  "directions", "0");
  tg::GradcheckOptions negative;
  negative.rtol = -1;
  EXPECT_TG_THROW(tg::gradcheck(cube<Bug::kNone>, {leaf({2}, 1)}, negative), ValueError, "rtol",
                  "-1");
}

}  // namespace
