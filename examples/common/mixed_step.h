// examples/common/mixed_step.h — one training step in mixed precision: train_step
// (examples/common/train_step.h) with the forward under autocast and, for float16, loss
// scaling. Shared by tiny_lm and fashion_mnist (--dtype bf16|f16).
// Course: docs/course/20-mixed-precision.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "examples/common/train_step.h"
#include "nn/grad_scaler.h"

namespace tg::examples {

/// The --dtype flag's values: "f32" trains as before, "bf16" and "f16" under autocast.
/// nullopt for f32; ValueError naming `program` for anything else.
std::optional<DType> autocast_dtype_from_flag(const std::string& program, const std::string& flag);

/// The scaler a run in `dtype` needs: enabled for float16 only (bfloat16 has float32's
/// range, so its gradients need no lifting), starting at `init_scale`.
inline nn::GradScaler scaler_for(std::optional<DType> dtype, double init_scale = 65536.0) {
  return nn::GradScaler({.init_scale = init_scale, .enabled = dtype == kFloat16});
}

/// For --resume: ValueError naming `program` unless the checkpoint's "dtype" metadata (absent
/// in checkpoints written before --dtype existed: f32) is this run's --dtype `flag`.
void check_resume_dtype(const std::string& program, const std::string& checkpoint,
                        const std::map<std::string, std::string>& metadata,
                        const std::string& flag);

/// One step as train_step takes it, with the forward and the loss under AutocastGuard(dtype)
/// (the parameters stay float32: master weights) and the backward of the scaled loss. The
/// gradients are unscaled before they are measured and clipped, so clip sees the true norm;
/// a step whose gradients overflowed is skipped (its loss is still reported) and the scale
/// backs off. Without a dtype it is train_step.
template <class Model>
StepResult mixed_step(Model& model, nn::Optimizer& opt, const Tensor& x, const Tensor& y,
                      const std::vector<Tensor>& params, double clip, std::optional<DType> dtype,
                      nn::GradScaler& scaler) {
  if (!dtype) return train_step(model, opt, x, y, params, clip);
  // exercise mixed_precision.step: begin
  Tensor loss;
  {
    AutocastGuard autocast(*dtype);
    loss = cross_entropy(model(x), y);  // float32: cross_entropy's autocast rule
  }
  opt.zero_grad();
  scaler.scale(loss).backward();  // gradients of S * loss (S = 1 without scaling)
  scaler.unscale_(opt);           // the true gradients, before they are measured
  const double true_norm = clip > 0 ? nn::clip_grad_norm(params, clip)  // unscaled, clipped
                                    : nn::global_grad_norm(params);     // unscaled, measured
  scaler.step(opt);  // skipped when a gradient is inf or NaN
  scaler.update();
  return {static_cast<double>(loss.item<float>()), true_norm};
  // exercise mixed_precision.step: end
}

}  // namespace tg::examples
