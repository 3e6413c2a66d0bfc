// tests/examples/mixed_step_test.cpp — the mixed-precision training step of chapter 20
// (examples/common/mixed_step.h, the exercise mixed_precision.step), held to the same step
// written out by hand, and to what loss scaling must and must not change.
#include "examples/common/mixed_step.h"

#include <cmath>
#include <vector>

#include "test_util.h"

namespace tg::examples {
namespace {

using testing::as_doubles;

struct Batch {
  Tensor x, y;
};

Batch batch(uint64_t seed) {
  Generator gen(seed);
  return {randn({6, 5}, kFloat32, gen), randint(0, 4, {6}, kInt64, gen)};
}

/// A two-layer model: its hidden activations are where float16 would round and overflow.
class Mlp : public nn::Module {
 public:
  explicit Mlp(Generator& gen) : Module("Mlp"), fc1(5, 8, {}, gen), fc2(8, 4, {}, gen) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  Tensor operator()(const Tensor& x) { return fc2(relu(fc1(x))); }
  nn::Linear fc1, fc2;
};

/// The parameters after `steps` steps of SGD with mixed_step, and each step's result.
struct TrainedRun {
  std::vector<std::vector<double>> params;
  std::vector<StepResult> steps;
  double scale;
};

TrainedRun run(std::optional<DType> dtype, nn::GradScaler scaler, double clip, int steps = 2) {
  Generator gen(3);
  Mlp model(gen);
  const std::vector<Tensor> params = model.parameters();
  nn::SGD sgd(params, {.lr = 0.5});
  TrainedRun r;
  for (int s = 0; s < steps; ++s) {
    const Batch d = batch(10 + static_cast<uint64_t>(s));
    r.steps.push_back(mixed_step(model, sgd, d.x, d.y, params, clip, dtype, scaler));
  }
  for (const Tensor& p : params) r.params.push_back(as_doubles(p));
  r.scale = scaler.get_scale();
  return r;
}

TEST(MixedStepTest, BFloat16StepsMatchTheStepWrittenOutByHand) {
  const TrainedRun got = run(kBFloat16, scaler_for(kBFloat16), /*clip=*/0.5);
  // By hand: the forward and the loss under autocast, the gradients of this batch only,
  // their norm, clipped, then SGD.
  Generator gen(3);
  Mlp model(gen);
  const std::vector<Tensor> params = model.parameters();
  for (int s = 0; s < 2; ++s) {
    const Batch d = batch(10 + static_cast<uint64_t>(s));
    Tensor loss;
    {
      AutocastGuard autocast(kBFloat16);
      loss = cross_entropy(model(d.x), d.y);
    }
    ASSERT_EQ(loss.dtype(), kFloat32);
    const std::vector<Tensor> g = grad({loss}, params);
    double sq = 0;
    for (const Tensor& gi : g) {
      for (double v : as_doubles(gi)) sq += v * v;
    }
    const double norm = std::sqrt(sq);
    EXPECT_NEAR(got.steps[static_cast<size_t>(s)].loss, loss.item<float>(), 1e-6) << "step " << s;
    EXPECT_NEAR(got.steps[static_cast<size_t>(s)].grad_norm, norm, 1e-5 * norm) << "step " << s;
    const double scale = std::min(1.0, 0.5 / (norm + 1e-6));  // clip_grad_norm's rule
    NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor p = params[i];
      p.copy_(p - g[i] * (0.5 * scale));
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_THAT(got.params[i],
                ::testing::Pointwise(::testing::DoubleNear(1e-5), as_doubles(params[i])))
        << "parameter " << i;
  }
}

TEST(MixedStepTest, Float16ScalingChangesNothingButTheScale) {
  // A power-of-two scale moves every float16 gradient by whole exponents: unscaled, they are
  // the gradients of an unscaled run, bit for bit, so the norm and the parameters must be
  // too. Forgetting to scale, to unscale before measuring, or to unscale before the step
  // changes them by a factor of 1024.
  const TrainedRun scaled = run(kFloat16, nn::GradScaler({.init_scale = 1024.0}), /*clip=*/0.5);
  const TrainedRun plain = run(kFloat16, nn::GradScaler({.enabled = false}), /*clip=*/0.5);
  ASSERT_EQ(scaled.steps.size(), plain.steps.size());
  for (size_t s = 0; s < plain.steps.size(); ++s) {
    EXPECT_EQ(scaled.steps[s].loss, plain.steps[s].loss) << "step " << s;
    EXPECT_EQ(scaled.steps[s].grad_norm, plain.steps[s].grad_norm) << "step " << s;
  }
  EXPECT_EQ(scaled.params, plain.params);
  EXPECT_EQ(scaled.scale, 1024.0);  // two good steps, far from growth_interval
}

TEST(MixedStepTest, AnOverflowSkipsTheStepAndHalvesTheScale) {
  // S = 2^40 lifts the float16 gradients past 65504: inf. The step must be skipped (the
  // parameters stay at their initial values), the loss still reported, and S halved.
  const TrainedRun initial = run(kFloat16, nn::GradScaler({.enabled = false}), 0, /*steps=*/0);
  const TrainedRun r = run(kFloat16, nn::GradScaler({.init_scale = std::ldexp(1.0, 40)}), 0, 1);
  EXPECT_EQ(r.params, initial.params);
  EXPECT_TRUE(std::isfinite(r.steps[0].loss));
  EXPECT_EQ(r.scale, std::ldexp(1.0, 39));
}

TEST(MixedStepTest, WithoutADTypeItIsTrainStep) {
  const TrainedRun mixed = run(std::nullopt, scaler_for(std::nullopt), 0.5);
  Generator gen(3);
  Mlp model(gen);
  const std::vector<Tensor> params = model.parameters();
  nn::SGD sgd(params, {.lr = 0.5});
  for (int s = 0; s < 2; ++s) {
    const Batch d = batch(10 + static_cast<uint64_t>(s));
    const StepResult r = train_step(model, sgd, d.x, d.y, params, 0.5);
    EXPECT_EQ(mixed.steps[static_cast<size_t>(s)].loss, r.loss);
  }
  for (size_t i = 0; i < params.size(); ++i) EXPECT_EQ(mixed.params[i], as_doubles(params[i]));
}

TEST(MixedStepTest, TheDTypeFlag) {
  EXPECT_EQ(autocast_dtype_from_flag("p", "f32"), std::nullopt);
  EXPECT_EQ(autocast_dtype_from_flag("p", "bf16"), kBFloat16);
  EXPECT_EQ(autocast_dtype_from_flag("p", "f16"), kFloat16);
  EXPECT_TG_THROW(autocast_dtype_from_flag("tiny_lm", "fp8"), ValueError, "tiny_lm", "--dtype",
                  "'fp8'");
  EXPECT_TRUE(scaler_for(kFloat16).options().enabled);
  EXPECT_FALSE(scaler_for(kBFloat16).options().enabled);
}

}  // namespace
}  // namespace tg::examples
