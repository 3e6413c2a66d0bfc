// nn/lr_schedule.h — learning-rate schedules: the learning rate as a function of the step.
//
// A schedule is a small value type with `double operator()(int64_t step) const`, where
// `step` counts optimizer steps from 0 (the first step() of a run uses schedule(0)). Use it
// by setting the rate before each step:
//
//   nn::CosineWithWarmup schedule{.base_lr = 3e-4, .warmup_steps = 100, .total_steps = 5000};
//   for (int64_t step = 0; step < 5000; ++step) {
//     schedule.apply(opt, step);   // opt.set_lr(schedule(step))
//     ... forward, backward, opt.step(), opt.zero_grad() ...
//   }
//
// Unlike torch.optim.lr_scheduler, a schedule keeps no state of its own (no last_epoch to
// save in a checkpoint): the step number is all it needs, so resuming at step N is just
// calling it with N. Settings are checked when the schedule is evaluated (ValueError
// naming the schedule and the bad value).
#pragma once

#include <cstdint>

#include "nn/optim.h"

namespace tg::nn {

/// Linear warmup, then a half cosine down to min_lr (the schedule of GPT-style training;
/// the warmup of nanoGPT's get_lr, the decay of torch's CosineAnnealingLR):
///   step <  warmup_steps:           base_lr * (step + 1) / warmup_steps
///   warmup_steps <= step < total:   min_lr + (base_lr - min_lr) * (1 + cos(pi * r)) / 2,
///                                   r = (step - warmup_steps) / (total_steps - warmup_steps)
///   step >= total_steps:            min_lr (the limit of the cosine at r = 1)
/// The warmup counts from step + 1 so that the very first step already moves the weights
/// (a warmup starting at exactly 0 would waste it); the last warmup step uses base_lr, and
/// so does step == warmup_steps, where the cosine starts (unless that is already
/// total_steps). With warmup_steps == 0 there is no warmup.
/// Requires 0 <= min_lr <= base_lr and 0 <= warmup_steps <= total_steps.
struct CosineWithWarmup {
  double base_lr = 1e-3;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  double min_lr = 0.0;

  double operator()(int64_t step) const;
  void apply(Optimizer& opt, int64_t step) const { opt.set_lr((*this)(step)); }
};

/// Decays by gamma every step_size steps (torch.optim.lr_scheduler.StepLR):
///   base_lr * gamma^floor(step / step_size)
/// Requires base_lr >= 0, step_size >= 1 and gamma >= 0.
struct StepLR {
  double base_lr = 1e-3;
  int64_t step_size = 1;
  double gamma = 0.1;

  double operator()(int64_t step) const;
  void apply(Optimizer& opt, int64_t step) const { opt.set_lr((*this)(step)); }
};

/// The same rate at every step (not torch's ConstantLR, which scales the rate by a factor
/// for a while). Requires lr >= 0.
struct ConstantLR {
  double lr = 1e-3;

  double operator()(int64_t step) const;
  void apply(Optimizer& opt, int64_t step) const { opt.set_lr((*this)(step)); }
};

}  // namespace tg::nn
