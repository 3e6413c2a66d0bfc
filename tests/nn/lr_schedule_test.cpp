// tests/nn/lr_schedule_test.cpp — cosine with warmup, step and constant schedules.
#include "nn/lr_schedule.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "test_util.h"

namespace {

using tg::nn::ConstantLR;
using tg::nn::CosineWithWarmup;
using tg::nn::StepLR;

TEST(CosineWithWarmupTest, WarmupIsLinearFromTheFirstStep) {
  const CosineWithWarmup s{.base_lr = 1.0, .warmup_steps = 4, .total_steps = 12};
  EXPECT_DOUBLE_EQ(s(0), 0.25);  // (0 + 1) / 4: the first step already moves
  EXPECT_DOUBLE_EQ(s(1), 0.5);
  EXPECT_DOUBLE_EQ(s(2), 0.75);
  EXPECT_DOUBLE_EQ(s(3), 1.0);  // the last warmup step reaches base_lr
}

TEST(CosineWithWarmupTest, CosineFromBaseToMinAtTheBoundaries) {
  const CosineWithWarmup s{.base_lr = 1.0, .warmup_steps = 4, .total_steps = 12, .min_lr = 0.1};
  EXPECT_DOUBLE_EQ(s(4), 1.0);   // r = 0: the cosine starts at base_lr
  EXPECT_DOUBLE_EQ(s(8), 0.55);  // r = 1/2: halfway between base and min
  EXPECT_NEAR(s(6), 0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi / 4)), 1e-15);
  EXPECT_DOUBLE_EQ(s(12), 0.1);  // r = 1
  EXPECT_DOUBLE_EQ(s(13), 0.1);  // and constant after total_steps
  EXPECT_DOUBLE_EQ(s(1000000), 0.1);
  for (int64_t step = 4; step < 12; ++step) EXPECT_GT(s(step), s(step + 1)) << step;
}

TEST(CosineWithWarmupTest, NoWarmupStartsAtBaseLr) {
  const CosineWithWarmup s{.base_lr = 2e-3, .warmup_steps = 0, .total_steps = 2};
  EXPECT_DOUBLE_EQ(s(0), 2e-3);
  EXPECT_DOUBLE_EQ(s(1), 1e-3);
  EXPECT_DOUBLE_EQ(s(2), 0.0);
}

TEST(CosineWithWarmupTest, AppliesToAnOptimizer) {
  tg::Tensor p = tg::zeros({1}).requires_grad_();
  tg::nn::SGD opt({p}, {.lr = 0.5});
  const CosineWithWarmup s{.base_lr = 0.4, .warmup_steps = 2, .total_steps = 10};
  s.apply(opt, 0);
  EXPECT_DOUBLE_EQ(opt.lr(), 0.2);
  StepLR{.base_lr = 0.3, .step_size = 1, .gamma = 0.5}.apply(opt, 2);
  EXPECT_DOUBLE_EQ(opt.lr(), 0.075);
  ConstantLR{.lr = 0.01}.apply(opt, 7);
  EXPECT_DOUBLE_EQ(opt.lr(), 0.01);
}

TEST(CosineWithWarmupTest, SettingsAndStepAreChecked) {
  EXPECT_TG_THROW((CosineWithWarmup{.base_lr = 0.1, .total_steps = 5, .min_lr = 0.2}(0)),
                  ValueError, "CosineWithWarmup", "min_lr 0.2", "base_lr 0.1");
  EXPECT_TG_THROW((CosineWithWarmup{.base_lr = -1, .total_steps = 5}(0)), ValueError,
                  "CosineWithWarmup", "base_lr -1");
  EXPECT_TG_THROW((CosineWithWarmup{.warmup_steps = 6, .total_steps = 5}(0)), ValueError,
                  "CosineWithWarmup", "warmup_steps 6", "total_steps 5");
  EXPECT_TG_THROW((CosineWithWarmup{.warmup_steps = -1, .total_steps = 5}(0)), ValueError,
                  "CosineWithWarmup", "warmup_steps -1");
  EXPECT_TG_THROW((CosineWithWarmup{.total_steps = 5}(-3)), ValueError, "CosineWithWarmup",
                  "step must be >= 0", "-3");
}

TEST(StepLRTest, MatchesTorchStepLR) {
  // torch.optim.lr_scheduler.StepLR(SGD(lr=0.1), step_size=3, gamma=0.5), lr before each step
  const std::vector<double> torch_a = {0.1,  0.1,   0.1,   0.05,  0.05,
                                       0.05, 0.025, 0.025, 0.025, 0.0125};
  const StepLR a{.base_lr = 0.1, .step_size = 3, .gamma = 0.5};
  for (size_t k = 0; k < torch_a.size(); ++k) EXPECT_EQ(a(k), torch_a[k]) << k;
  // StepLR(SGD(lr=0.3), step_size=2, gamma=0.1): PyTorch multiplies step by step, we use
  // the closed form; both agree to the last bit or two.
  const std::vector<double> torch_b = {0.3, 0.3, 0.03, 0.03, 0.003, 0.003, 3e-04, 3e-04, 3e-05};
  const StepLR b{.base_lr = 0.3, .step_size = 2, .gamma = 0.1};
  for (size_t k = 0; k < torch_b.size(); ++k) EXPECT_NEAR(b(k), torch_b[k], 1e-15 * torch_b[k]);
}

TEST(StepLRTest, SettingsAreChecked) {
  EXPECT_TG_THROW((StepLR{.step_size = 0}(1)), ValueError, "StepLR", "step_size", "0");
  EXPECT_TG_THROW((StepLR{.gamma = -0.5}(1)), ValueError, "StepLR", "gamma", "-0.5");
  EXPECT_TG_THROW((StepLR{.base_lr = -0.1}(1)), ValueError, "StepLR", "base_lr", "-0.1");
  EXPECT_TG_THROW((StepLR{}(-1)), ValueError, "StepLR", "step must be >= 0", "-1");
}

TEST(ConstantLRTest, IsConstantAndChecked) {
  const ConstantLR c{.lr = 3e-4};
  EXPECT_EQ(c(0), 3e-4);
  EXPECT_EQ(c(123456), 3e-4);
  EXPECT_TG_THROW((ConstantLR{.lr = -1}(0)), ValueError, "ConstantLR", "lr must be >= 0", "-1");
  EXPECT_TG_THROW((ConstantLR{}(-2)), ValueError, "ConstantLR", "step", "-2");
}

}  // namespace
