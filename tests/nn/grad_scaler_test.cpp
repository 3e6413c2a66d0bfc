// tests/nn/grad_scaler_test.cpp — loss scaling with PyTorch's GradScaler semantics: the
// scaled loss, unscaling and the inf check, the skipped step, backoff and growth (as
// torch.amp's _amp_update_scale_ computes them), the misuse errors, and the state in a
// checkpoint.
#include "nn/grad_scaler.h"

#include <filesystem>
#include <limits>

#include "nn/checkpoint.h"
#include "nn/linear.h"
#include "test_util.h"

namespace tg::nn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// One float32 parameter p = (1, 2) whose gradient is set by hand to S * g.
struct OneParam {
  Tensor p = tensor({1.f, 2.f}).requires_grad_();
  SGD opt{{p}, {.lr = 0.5}};
  void set_grad(float g0, float g1) { p.set_grad(tensor({g0, g1})); }
};

TEST(GradScalerTest, ScalesTheLossAndItsGradients) {
  GradScaler scaler;
  EXPECT_EQ(scaler.get_scale(), 65536.0);
  const Tensor w = tensor({0.5, -1.0}).requires_grad_();
  const Tensor loss = sum(mul(w, w));
  const Tensor scaled = scaler.scale(loss);
  EXPECT_EQ(scaled.item<double>(), 65536.0 * 1.25);
  scaled.backward();
  EXPECT_THAT(testing::as_doubles(w.grad()), ::testing::ElementsAre(65536.0, -131072.0));
  // Disabled: the loss itself, scale 1, and step() steps.
  GradScaler off({.enabled = false});
  EXPECT_EQ(off.get_scale(), 1.0);
  EXPECT_EQ(off.scale(loss).storage(), loss.storage());
}

TEST(GradScalerTest, StepUnscalesThenSteps) {
  OneParam m;
  GradScaler scaler({.init_scale = 1024.0});
  m.set_grad(1024.f * 0.25f, 1024.f * -0.5f);
  EXPECT_TRUE(scaler.step(m.opt));
  EXPECT_FALSE(scaler.found_inf());
  EXPECT_THAT(testing::as_doubles(m.p.grad()), ::testing::ElementsAre(0.25, -0.5));
  EXPECT_THAT(testing::as_doubles(m.p), ::testing::ElementsAre(1.0 - 0.125, 2.0 + 0.25));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 1024.0);
  EXPECT_EQ(scaler.growth_tracker(), 1);
}

TEST(GradScalerTest, AnInfOrNanSkipsTheStepAndBacksOff) {
  for (const float bad : {static_cast<float>(kInf), std::numeric_limits<float>::quiet_NaN()}) {
    OneParam m;
    GradScaler scaler({.init_scale = 1024.0, .growth_interval = 3});
    m.set_grad(1.f, 1.f);
    scaler.step(m.opt);
    scaler.update();  // one good step: the run is 1
    m.set_grad(bad, 1.f);
    EXPECT_FALSE(scaler.step(m.opt));
    EXPECT_TRUE(scaler.found_inf());
    EXPECT_THAT(testing::as_doubles(m.p),
                ::testing::ElementsAre(1.0 - 0.5 / 1024, 2.0 - 0.5 / 1024));  // unchanged
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), 512.0);
    EXPECT_EQ(scaler.growth_tracker(), 0);
    EXPECT_FALSE(scaler.found_inf());
  }
}

TEST(GradScalerTest, GrowsAfterGrowthIntervalGoodStepsInARow) {
  // found_inf per step, and the scale after each update, as _amp_update_scale_ gives them.
  OneParam m;
  GradScaler scaler(
      {.init_scale = 8.0, .growth_factor = 2.0, .backoff_factor = 0.25, .growth_interval = 2});
  const std::vector<bool> overflow = {false, false, false, true, false, false, true, true};
  const std::vector<double> scales = {8, 16, 16, 4, 4, 8, 2, 0.5};
  const std::vector<int64_t> runs = {1, 0, 1, 0, 1, 0, 0, 0};
  for (size_t i = 0; i < overflow.size(); ++i) {
    m.set_grad(overflow[i] ? static_cast<float>(kInf) : 1.f, 1.f);
    EXPECT_EQ(scaler.step(m.opt), !overflow[i]) << i;
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), scales[i]) << i;
    EXPECT_EQ(scaler.growth_tracker(), runs[i]) << i;
  }
}

TEST(GradScalerTest, AScaleThatWouldOverflowStaysWhereItIs) {
  OneParam m;
  GradScaler scaler({.init_scale = 0x1p127, .growth_interval = 1});
  m.set_grad(1.f, 1.f);
  scaler.step(m.opt);
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 0x1p127);  // 2^128 is inf in float32
  EXPECT_EQ(scaler.growth_tracker(), 0);
}

TEST(GradScalerTest, UnscaleFirstToClipTheTrueGradient) {
  OneParam m;
  GradScaler scaler({.init_scale = 4.0});
  m.set_grad(4.f * 3.f, 4.f * 4.f);
  scaler.unscale_(m.opt);
  EXPECT_THAT(testing::as_doubles(m.p.grad()), ::testing::ElementsAre(3.0, 4.0));  // norm 5
  EXPECT_TRUE(scaler.step(m.opt));  // does not divide a second time
  EXPECT_THAT(testing::as_doubles(m.p), ::testing::ElementsAre(1.0 - 1.5, 2.0 - 2.0));
  scaler.update();
}

TEST(GradScalerTest, MisuseAndBadOptionsAreNamed) {
  OneParam m;
  GradScaler scaler;
  m.set_grad(1.f, 1.f);
  EXPECT_TG_THROW(scaler.update(), MisuseError, "GradScaler::update", "no inf check");
  scaler.unscale_(m.opt);
  EXPECT_TG_THROW(scaler.unscale_(m.opt), MisuseError, "GradScaler::unscale_", "already");
  scaler.step(m.opt);
  EXPECT_TG_THROW(scaler.step(m.opt), MisuseError, "GradScaler::step", "already");
  EXPECT_TG_THROW(scaler.unscale_(m.opt), MisuseError, "GradScaler::unscale_", "after step()");
  scaler.update();
  Tensor h = tensor({1.f}).to(kFloat16).requires_grad_();
  h.set_grad(tensor({1.f}).to(kFloat16));
  SGD half_opt({h});
  EXPECT_TG_THROW(scaler.unscale_(half_opt), DTypeError, "GradScaler::unscale_", "float16",
                  "master weights");
  EXPECT_TG_THROW(GradScaler({.growth_factor = 1.0}), ValueError, "growth_factor", "> 1");
  EXPECT_TG_THROW(GradScaler({.backoff_factor = 1.0}), ValueError, "backoff_factor");
  EXPECT_TG_THROW(GradScaler({.init_scale = kInf}), ValueError, "init_scale", "inf");
  EXPECT_TG_THROW(GradScaler({.growth_interval = 0}), ValueError, "growth_interval", "0");
  EXPECT_TG_THROW(scaler.load_state_string("65536 2 0.5"), ValueError, "'65536 2 0.5'");
  EXPECT_TG_THROW(scaler.load_state_string("65536 2 0.5 10 10"), ValueError, "growth_tracker 10");
  EXPECT_EQ(scaler.get_scale(), 65536.0);  // unchanged by the refused loads
}

TEST(GradScalerTest, ItsStateTravelsInACheckpoint) {
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("scaler_{}.safetensors", getpid()))
          .string();
  Generator gen(3);
  Linear model(2, 2, {}, gen);
  GradScaler scaler({.init_scale = 1024.0, .growth_factor = 3.0, .growth_interval = 5});
  SGD opt(model.parameters());
  for (const float g : {1.f, static_cast<float>(kInf), 1.f, 1.f}) {
    for (Tensor p : model.parameters()) p.set_grad(full(p.shape(), g));
    scaler.step(opt);
    scaler.update();
  }
  ASSERT_EQ(scaler.get_scale(), 512.0);
  ASSERT_EQ(scaler.growth_tracker(), 2);
  save_checkpoint(path, {.model = &model, .optimizer = &opt, .scaler = &scaler});
  GradScaler restored;
  SGD opt2(model.parameters());
  load_checkpoint(path, model, &opt2, {}, &restored);
  EXPECT_EQ(restored.state_string(), scaler.state_string());
  EXPECT_EQ(restored.options().growth_factor, 3.0);
  EXPECT_EQ(restored.growth_tracker(), 2);
  // A file without a scaler's state is refused when one is asked for, and changes nothing.
  save_checkpoint(path, {.model = &model, .optimizer = &opt});
  GradScaler untouched({.init_scale = 7.0});
  EXPECT_TG_THROW(load_checkpoint(path, model, &opt2, {}, &untouched), ValueError,
                  "no GradScaler state");
  EXPECT_EQ(untouched.get_scale(), 7.0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tg::nn
