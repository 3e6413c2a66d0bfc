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

TEST(GradcheckTest, CatchesAWrongFactorAndSaysWhere) {
  const auto r = tg::gradcheck(cube<Bug::kFactorTwo>, {leaf({2, 3}, 5)});
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message,
              tg::testing::MessageHas("input 0", "(2, 3)", "element 0", "index (0, 0)", "analytic",
                                      "numeric", "atol 1e-05", "rtol 0.001"));
}

TEST(GradcheckTest, CatchesASingleWrongElement) {
  const auto r = tg::gradcheck(cube<Bug::kOneElement>, {leaf({2, 3}, 6)});
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, tg::testing::MessageHas("element 4", "index (1, 1)"));
}

TEST(GradcheckTest, ReportsAnInputThatGotNoGradient) {
  const auto r = tg::gradcheck(cube<Bug::kEmptySlot>, {leaf({3}, 7)});
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.message, tg::testing::MessageHas("input 0", "got no gradient"));
  // An input the output does not depend on is reported the same way.
  const auto unused = tg::gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[0]; },
                                    {leaf({2}, 8), leaf({2}, 9)});
  EXPECT_FALSE(unused.ok);
  EXPECT_THAT(unused.message, tg::testing::MessageHas("input 1", "got no gradient"));
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

TEST(GradcheckTest, RejectsInputsItCannotCheck) {
  Tensor f32 = tg::ones({2}).requires_grad_();
  EXPECT_TG_THROW(tg::gradcheck(cube<Bug::kNone>, {f32}), DTypeError, "gradcheck", "input 0",
                  "float32", "float64");
  EXPECT_TG_THROW(tg::gradcheck(cube<Bug::kNone>, {tg::ones({2}, tg::kFloat64)}), MisuseError,
                  "gradcheck", "no input requires grad");
  tg::GradcheckOptions bad;
  bad.eps = 0;
  EXPECT_TG_THROW(tg::gradcheck(cube<Bug::kNone>, {leaf({2}, 1)}, bad), ValueError, "eps", "0");
}

}  // namespace
