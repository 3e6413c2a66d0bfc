// nn/lr_schedule.cpp — the closed forms of the schedules in nn/lr_schedule.h.
#include "nn/lr_schedule.h"

#include <cmath>
#include <numbers>

namespace tg::nn {
namespace {

void check_step(const char* schedule, int64_t step) {
  TG_CHECK(step >= 0, ValueError, "{}: step must be >= 0, got {}", schedule, step);
}

}  // namespace

double CosineWithWarmup::operator()(int64_t step) const {
  TG_CHECK(base_lr >= 0 && min_lr >= 0 && min_lr <= base_lr, ValueError,
           "CosineWithWarmup: needs 0 <= min_lr <= base_lr, got min_lr {} and base_lr {}", min_lr,
           base_lr);
  TG_CHECK(warmup_steps >= 0 && warmup_steps <= total_steps, ValueError,
           "CosineWithWarmup: needs 0 <= warmup_steps <= total_steps, got warmup_steps {} and "
           "total_steps {}",
           warmup_steps, total_steps);
  check_step("CosineWithWarmup", step);
  if (step < warmup_steps) {
    return base_lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  }
  if (step >= total_steps) return min_lr;
  const double r =
      static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps);
  return min_lr + (base_lr - min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * r));
}

double StepLR::operator()(int64_t step) const {
  TG_CHECK(base_lr >= 0, ValueError, "StepLR: base_lr must be >= 0, got {}", base_lr);
  TG_CHECK(step_size >= 1, ValueError, "StepLR: step_size must be >= 1, got {}", step_size);
  TG_CHECK(gamma >= 0, ValueError, "StepLR: gamma must be >= 0, got {}", gamma);
  check_step("StepLR", step);
  return base_lr * std::pow(gamma, static_cast<double>(step / step_size));
}

double ConstantLR::operator()(int64_t step) const {
  TG_CHECK(lr >= 0, ValueError, "ConstantLR: lr must be >= 0, got {}", lr);
  check_step("ConstantLR", step);
  return lr;
}

}  // namespace tg::nn
