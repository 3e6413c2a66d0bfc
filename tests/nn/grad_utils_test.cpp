// tests/nn/grad_utils_test.cpp — gradient norms, clipping and training diagnostics.
// (clip_grad_norm is also compared with torch.nn.utils.clip_grad_norm_ case by case in
// tests/ops/reference_test.cpp, family "optim".)
#include "nn/grad_utils.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "nn/optim.h"
#include "test_util.h"

namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using tg::Tensor;
using tg::testing::as_doubles;

// A float64 parameter of `shape` whose .grad() is `grad`.
Tensor with_grad(const Tensor& grad) {
  Tensor p = tg::zeros(grad.shape(), grad.dtype()).requires_grad_();
  p.set_grad(grad);
  return p;
}

TEST(GlobalGradNormTest, NormsOverAllGradientsTogether) {
  const std::vector<Tensor> ps = {with_grad(tg::tensor({3.0, -4.0})),
                                  with_grad(tg::tensor({12.0}))};
  EXPECT_DOUBLE_EQ(tg::nn::global_grad_norm(ps), 13.0);
  EXPECT_DOUBLE_EQ(tg::nn::global_grad_norm(ps, 1.0), 19.0);
  EXPECT_DOUBLE_EQ(tg::nn::global_grad_norm(ps, INFINITY), 12.0);
  EXPECT_NEAR(tg::nn::global_grad_norm(ps, 3.0), std::cbrt(27.0 + 64.0 + 1728.0), 1e-12);
}

TEST(GlobalGradNormTest, ParametersWithoutGradAreLeftOut) {
  Tensor none = tg::zeros({5}).requires_grad_();
  EXPECT_EQ(tg::nn::global_grad_norm({none}), 0.0);
  EXPECT_DOUBLE_EQ(tg::nn::global_grad_norm({none, with_grad(tg::tensor({-2.0}))}), 2.0);
  EXPECT_EQ(tg::nn::global_grad_norm({}), 0.0);
}

TEST(GlobalGradNormTest, NaNShowsInEveryNorm) {
  const std::vector<Tensor> ps = {with_grad(tg::tensor({1.0, NAN, 100.0}))};
  EXPECT_TRUE(std::isnan(tg::nn::global_grad_norm(ps)));
  EXPECT_TRUE(std::isnan(tg::nn::global_grad_norm(ps, INFINITY)));
}

TEST(GlobalGradNormTest, NormTypeIsChecked) {
  EXPECT_TG_THROW(tg::nn::global_grad_norm({}, 0.0), ValueError, "global_grad_norm", "norm_type",
                  "0");
  EXPECT_TG_THROW(tg::nn::global_grad_norm({}, -2.0), ValueError, "global_grad_norm", "-2");
}

TEST(ClipGradNormTest, ScalesEveryGradientWhenAboveMax) {
  const std::vector<Tensor> ps = {with_grad(tg::tensor({3.0, -4.0})),
                                  with_grad(tg::tensor({12.0}))};
  EXPECT_DOUBLE_EQ(tg::nn::clip_grad_norm(ps, 6.5), 13.0);  // the norm before clipping
  const double coef = 6.5 / (13.0 + 1e-6);
  EXPECT_THAT(as_doubles(ps[0].grad()), Pointwise(DoubleNear(1e-15), {3 * coef, -4 * coef}));
  EXPECT_THAT(as_doubles(ps[1].grad()), Pointwise(DoubleNear(1e-15), {12 * coef}));
  EXPECT_NEAR(tg::nn::global_grad_norm(ps), 6.5, 1e-6);
}

TEST(ClipGradNormTest, LeavesGradientsAloneWhenBelowMax) {
  const std::vector<Tensor> ps = {with_grad(tg::tensor({0.1f, -0.2f}))};
  const uint64_t version = ps[0].grad().storage()->version();
  EXPECT_NEAR(tg::nn::clip_grad_norm(ps, 1.0), std::sqrt(0.05), 1e-7);
  EXPECT_THAT(as_doubles(ps[0].grad()), ElementsAre(double(0.1f), double(-0.2f)));
  EXPECT_EQ(ps[0].grad().storage()->version(), version);
}

TEST(ClipGradNormTest, Float32AndNonContiguousGradients) {
  const Tensor base = tg::tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {3, 2});
  Tensor p = tg::zeros({2, 3}).requires_grad_();
  p.set_grad(base.t());  // a transposed view as the gradient
  ASSERT_FALSE(p.grad().is_contiguous());
  const double total = tg::nn::clip_grad_norm({p}, 1.0, INFINITY);
  EXPECT_EQ(total, 6.0);
  const float coef = static_cast<float>(1.0 / (6.0 + 1e-6));
  EXPECT_THAT(as_doubles(p.grad()), ElementsAre(1.0f * coef, 3.0f * coef, 5.0f * coef, 2.0f * coef,
                                                4.0f * coef, 6.0f * coef));
}

TEST(ClipGradNormTest, NonFiniteNormIsReturnedAndNothingIsScaled) {
  const std::vector<Tensor> ps = {with_grad(tg::tensor({INFINITY, 1.0}))};
  EXPECT_TRUE(std::isinf(tg::nn::clip_grad_norm(ps, 1.0)));
  EXPECT_THAT(as_doubles(ps[0].grad()), ElementsAre(INFINITY, 1.0));
}

TEST(ClipGradNormTest, ArgumentsAreChecked) {
  EXPECT_TG_THROW(tg::nn::clip_grad_norm({}, -1.0), ValueError, "clip_grad_norm", "max_norm", "-1");
  EXPECT_TG_THROW(tg::nn::clip_grad_norm({}, 1.0, 0.0), ValueError, "clip_grad_norm", "norm_type",
                  "0");
}

// ------------------------------------------------------------------- update ratios
using Named = std::vector<std::pair<std::string, Tensor>>;

TEST(UpdateRatioTest, RatioOfUpdateNormToWeightNorm) {
  const Named before = {{"w", tg::tensor({3.0, 4.0})},
                        {"zero", tg::zeros({2}, tg::kFloat64)},
                        {"moved", tg::zeros({1}, tg::kFloat64)}};
  const Named after = {{"w", tg::tensor({3.0, 4.5})},
                       {"zero", tg::zeros({2}, tg::kFloat64)},
                       {"moved", tg::tensor({0.5})}};
  const std::vector<tg::nn::UpdateRatio> r = tg::nn::update_ratios(before, after);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].name, "w");
  EXPECT_DOUBLE_EQ(r[0].update_norm, 0.5);
  EXPECT_DOUBLE_EQ(r[0].weight_norm, 5.0);
  EXPECT_DOUBLE_EQ(r[0].ratio, 0.1);
  EXPECT_EQ(r[1].ratio, 0.0);           // nothing moved
  EXPECT_TRUE(std::isinf(r[2].ratio));  // a zero weight moved
}

TEST(UpdateRatioTest, MismatchedSnapshotsAreErrors) {
  const Named one = {{"w", tg::zeros({2})}};
  EXPECT_TG_THROW(tg::nn::update_ratios(one, {}), ValueError, "update_ratios", "1 tensors",
                  "0 after");
  EXPECT_TG_THROW(tg::nn::update_ratios(one, {{"v", tg::zeros({2})}}), ValueError, "update_ratios",
                  "'w'", "'v'");
  EXPECT_TG_THROW(tg::nn::update_ratios(one, {{"w", tg::zeros({3})}}), ValueError, "update_ratios",
                  "(2)", "(3)");
}

TEST(UpdateTrackerTest, ReportsWhatOneSGDStepDid) {
  Tensor w = tg::tensor({3.0, 4.0}).requires_grad_();
  Tensor b = tg::tensor({1.0}).requires_grad_();
  tg::nn::SGD opt({w, b}, {.lr = 0.1});
  tg::nn::UpdateTracker tracker({{"w", w}, {"b", b}});
  w.set_grad(tg::tensor({0.0, -5.0}));  // w moves by 0.5
  opt.step();                           // b has no grad: it stays
  const auto r = tracker.ratios();
  EXPECT_NEAR(r[0].ratio, 0.1, 1e-15);
  EXPECT_EQ(r[1].ratio, 0.0);
  tracker.snapshot();
  EXPECT_EQ(tracker.ratios()[0].update_norm, 0.0);
}

// ------------------------------------------------------------------- missing gradients
TEST(MissingGradTest, NamesEveryParameterTheLossDidNotReach) {
  Tensor used = tg::ones({2}, tg::kFloat64).requires_grad_();
  Tensor unused = tg::ones({2}, tg::kFloat64).requires_grad_();
  Tensor detached = tg::ones({2}, tg::kFloat64).requires_grad_();
  Tensor frozen = tg::ones({2}, tg::kFloat64);  // does not require grad: never listed
  const Tensor loss = tg::sum(tg::add(tg::mul(used, frozen), tg::mul(detached.detach(), 2.0)));
  loss.backward();
  const Named named = {
      {"a.weight", used}, {"b.weight", unused}, {"c.bias", detached}, {"frozen", frozen}};
  EXPECT_THAT(tg::nn::params_without_grad(named), ElementsAre("b.weight", "c.bias"));
  EXPECT_TG_THROW(tg::nn::check_all_have_grad(named), MisuseError, "check_all_have_grad",
                  "2 of 4 parameters", "b.weight, c.bias", "not connected to the loss");
  EXPECT_NO_THROW(tg::nn::check_all_have_grad({{"a.weight", used}, {"frozen", frozen}}));
}

}  // namespace
