// tests/core/random_test.cpp — random factories: ranges, moments, seeding, errors.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "test_util.h"

namespace {

using tg::Generator;

TEST(RandomTest, RandIsInUnitIntervalForEveryFloatingDtype) {
  for (tg::DType dt : {tg::kFloat32, tg::kFloat64, tg::kFloat16, tg::kBFloat16}) {
    Generator g(1);
    const tg::Tensor t = tg::rand({4000}, dt, g);
    EXPECT_EQ(t.dtype(), dt);
    const auto v = t.to(tg::kFloat64).to_vector<double>();
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0) << dt;
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0) << dt;
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
    EXPECT_NEAR(mean, 0.5, 5 * std::sqrt(1.0 / 12 / v.size())) << dt;
  }
}

TEST(RandomTest, RandUsesOneWordPerFloatElement) {
  Generator g(2), raw(2);
  const auto v = tg::rand({2, 3}, tg::kFloat32, g).to_vector<float>();
  for (float x : v) EXPECT_EQ(x, raw.uniform_float());
  EXPECT_EQ(g.offset(), 6u);
}

TEST(RandomTest, SameSeedSameTensorDifferentSeedDifferentTensor) {
  Generator a(123), b(123), c(124);
  const auto x = tg::randn({3, 5}, tg::kFloat32, a).to_vector<float>();
  EXPECT_EQ(x, tg::randn({3, 5}, tg::kFloat32, b).to_vector<float>());
  EXPECT_NE(x, tg::randn({3, 5}, tg::kFloat32, c).to_vector<float>());
  tg::manual_seed(5);
  const auto y = tg::rand({4}).to_vector<float>();
  tg::manual_seed(5);
  EXPECT_EQ(y, tg::rand({4}).to_vector<float>());
}

TEST(RandomTest, RandnFillsPairsInOrderAndDropsTheLastOfAnOddCount) {
  Generator g(8), raw(8);
  const auto v = tg::randn({5}, tg::kFloat64, g).to_vector<double>();
  const auto p0 = raw.normal_pair(), p1 = raw.normal_pair(), p2 = raw.normal_pair();
  EXPECT_EQ(v, (std::vector<double>{p0[0], p0[1], p1[0], p1[1], p2[0]}));
  EXPECT_EQ(g.offset(), raw.offset());
}

TEST(RandomTest, RandnHasStandardMoments) {
  Generator g(4);
  const auto v = tg::randn({100000}, tg::kFloat32, g).to(tg::kFloat64).to_vector<double>();
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= v.size();
  EXPECT_NEAR(mean, 0.0, 5 / std::sqrt(v.size()));
  EXPECT_NEAR(var, 1.0, 5 * std::sqrt(2.0 / v.size()));
}

TEST(RandomTest, RandintStaysInRangeAndHitsEveryValue) {
  Generator g(6);
  const auto v = tg::randint(-2, 3, {1000}, tg::kInt64, g).to_vector<int64_t>();
  for (int64_t x : v) {
    EXPECT_GE(x, -2);
    EXPECT_LT(x, 3);
  }
  for (int64_t want = -2; want < 3; ++want) EXPECT_NE(std::count(v.begin(), v.end(), want), 0);
  EXPECT_EQ(tg::randint(0, 10, {3}, tg::kFloat32, g).dtype(), tg::kFloat32);
}

TEST(RandomTest, RandpermIsAPermutation) {
  Generator g(10);
  auto v = tg::randperm(50, g).to_vector<int64_t>();
  EXPECT_NE(v, [] {
    std::vector<int64_t> id(50);
    std::iota(id.begin(), id.end(), 0);
    return id;
  }());
  std::sort(v.begin(), v.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(v[i], i);
  EXPECT_EQ(tg::randperm(0, g).numel(), 0);
  EXPECT_EQ(tg::randperm(1, g).to_vector<int64_t>(), std::vector<int64_t>{0});
}

TEST(RandomTest, BernoulliRespectsProbabilities) {
  Generator g(12);
  const tg::Tensor p = tg::tensor({0.0, 1.0, 0.0, 1.0}, {2, 2});
  EXPECT_EQ(tg::bernoulli(p, g).to_vector<double>(), (std::vector<double>{0, 1, 0, 1}));
  const auto v = tg::bernoulli({20000}, 0.3, tg::kFloat32, g).to_vector<float>();
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  EXPECT_NEAR(mean, 0.3, 5 * std::sqrt(0.3 * 0.7 / v.size()));
  EXPECT_EQ(tg::bernoulli({3}, 1.0, tg::kBool, g).to_vector<bool>(), std::vector<bool>(3, true));
}

TEST(RandomTest, ErrorsNameTheOpAndTheValue) {
  Generator g;
  EXPECT_TG_THROW(tg::rand({2}, tg::kInt64, g), DTypeError, "rand", "int64");
  EXPECT_TG_THROW(tg::randn({2}, tg::kBool, g), DTypeError, "randn", "bool");
  EXPECT_TG_THROW(tg::randint(5, 5, {2}, tg::kInt64, g), ValueError, "randint", "5");
  EXPECT_TG_THROW(tg::randperm(-3, g), ValueError, "randperm", "-3");
  EXPECT_TG_THROW(tg::bernoulli({2}, 1.5, tg::kFloat32, g), ValueError, "bernoulli", "1.5");
  EXPECT_TG_THROW(tg::bernoulli(tg::tensor({0.5f, -0.25f}, {2}), g), ValueError, "bernoulli",
                  "-0.25", "index 1");
  EXPECT_TG_THROW(tg::bernoulli(tg::tensor({1, 0}, {2}), g), DTypeError, "bernoulli", "int64");
  EXPECT_TG_THROW(tg::rand({-1}, tg::kFloat32, g), ShapeError, "-1");
}

}  // namespace
