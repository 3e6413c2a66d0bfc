// tests/ops/vector_math_test.cpp — fast_exp, the vectorisable exp of the fast kernels, against
// std::exp over the whole range of float and double, and at its edges.
#include "ops/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tg::detail {
namespace {

template <class F>
double worst_ulp(double lo, double hi, double step) {
  double worst = 0;
  for (double x = lo; x <= hi; x += step) {
    const F xf = static_cast<F>(x);
    const F exact = std::exp(xf);
    if (exact < std::numeric_limits<F>::min() || std::isinf(exact)) continue;  // checked below
    const F ulp = std::nextafter(exact, std::numeric_limits<F>::infinity()) - exact;
    worst = std::max(worst, double(std::abs(fast_exp(xf) - exact) / ulp));
  }
  return worst;
}

TEST(FastExp, WithinTwoUlpOfStdExpOverTheNormalRange) {
  EXPECT_LE(worst_ulp<float>(-87.3, 88.7, 1e-3), 2.0);
  EXPECT_LE(worst_ulp<double>(-708.3, 709.7, 7e-3), 2.0);
}

TEST(FastExp, Edges) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
  EXPECT_EQ(fast_exp(0.0), 1.0);
  EXPECT_EQ(fast_exp(-inf), 0.0f);
  EXPECT_EQ(fast_exp(-1000.0f), 0.0f);
  EXPECT_EQ(fast_exp(inf), inf);
  EXPECT_EQ(fast_exp(89.0f), inf);  // e^89 > FLT_MAX
  EXPECT_EQ(fast_exp(710.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(fast_exp(std::nanf(""))));
  EXPECT_TRUE(std::isnan(fast_exp(std::nan(""))));
  // Subnormal results: e^-100 ~ 3.7e-44 is a float subnormal; a relative 1% is generous for
  // the few bits a subnormal keeps.
  EXPECT_NEAR(fast_exp(-100.0f) / std::exp(-100.0f), 1.0f, 0.01f);
}

}  // namespace
}  // namespace tg::detail
