// tests/core/simd_test.cpp — the loop shapes of core/simd.h (every index once, in order;
// lane sums and maxima), and fast_exp against std::exp over the whole range of float and
// double, and at its edges.
#include "core/simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tg::detail {
namespace {

TEST(SimdFor, VisitsEveryIndexOnceInOrder) {
  for (int64_t n : {0, 1, 15, 16, 17, 100}) {
    std::vector<int64_t> seen;
    simd_for(n, [&](int64_t i) { seen.push_back(i); });
    ASSERT_EQ(static_cast<int64_t>(seen.size()), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i) << "n=" << n;
  }
}

TEST(LaneSum, IsTheSumInAnOrderThatDependsOnNAlone) {
  // Integers: every order gives the exact sum.
  for (int64_t n : {0, 1, 15, 16, 17, 100}) {
    EXPECT_EQ(lane_sum<double>(n, [](int64_t i) { return double(i + 1); }), n * (n + 1) / 2.0);
  }
  // 1 and 32 copies of 2^-24 in float: added left to right each copy is lost (1 + 2^-24
  // rounds to 1). In lanes, lane 0 holds 1 and loses its two copies, but lanes 1..15 add
  // their 30 copies among themselves first, and that sum survives.
  const auto term = [](int64_t i) { return i == 0 ? 1.0f : 0x1p-24f; };
  float left_to_right = 0;
  for (int64_t i = 0; i < 33; ++i) left_to_right += term(i);
  EXPECT_EQ(left_to_right, 1.0f);
  EXPECT_EQ(lane_sum<float>(33, term), 1.0f + 30 * 0x1p-24f);
}

TEST(LaneMax, IsTheMaxAndANaNNeverWins) {
  const float nan = std::nanf("");
  const std::vector<float> v = {1, nan, 7, -3, 2, 9, nan, 4, 0, 5, 6, 8, 1, 2, 3, 4, 8.5f, nan};
  EXPECT_EQ(row_max(v.data(), static_cast<int64_t>(v.size())), 9.0f);
  EXPECT_EQ(row_max(v.data(), 0), -std::numeric_limits<float>::infinity());
}

TEST(FastSigmoid, MatchesTheFormulaWithoutOverflow) {
  for (double x : {-800.0, -30.0, -1.0, 0.0, 1.0, 30.0, 800.0}) {
    EXPECT_NEAR(fast_sigmoid(x), 1 / (1 + std::exp(-x)), 1e-15) << x;
  }
  EXPECT_EQ(fast_sigmoid(-800.0f), 0.0f);
  EXPECT_EQ(fast_sigmoid(800.0f), 1.0f);
}

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
