// nn/grad_scaler.h — loss scaling for float16 training, with the semantics of PyTorch's
// torch.amp.GradScaler (one optimizer at a time).
//
// float16 keeps numbers down to 6e-8 (2^-24, and only 2^-14 at full precision); the
// gradients of a small model's activations are often smaller, and round to zero in a
// float16 backward. Scaling the loss by S scales every gradient by S (the chain rule is
// linear), lifting them into float16's range; the optimizer must then see them divided by S
// again, and must not step at all when the scaled backward overflowed to inf or NaN:
//
//   scaler.scale(loss).backward();   // gradients of S * loss
//   scaler.unscale_(opt);            // optional: divide by S now (to clip the true norm)
//   clip_grad_norm(params, 1.0);
//   scaler.step(opt);                // divides by S if not done yet; skips the step when a
//                                    // gradient is inf or NaN
//   scaler.update();                 // S *= backoff after a skipped step; S *= growth after
//                                    // growth_interval good steps in a row
//
// S starts large (2^16) and finds its level by itself: it halves on every overflow and
// doubles again after a long run without one. bfloat16 has float32's range and needs no
// scaling. The parameters (and so the gradients the optimizer reads) stay float32: the
// master weights; a float16 or bfloat16 gradient is refused, as PyTorch refuses float16.
// The state (S, the run of good steps and the options) is saved in checkpoints
// (nn/checkpoint.h, TrainingState::scaler).
#pragma once

#include <cstdint>
#include <string>

#include "nn/optim.h"

namespace tg::nn {

struct GradScalerOptions {
  double init_scale = 65536.0;     ///< 2^16, PyTorch's default
  double growth_factor = 2.0;      ///< > 1
  double backoff_factor = 0.5;     ///< in (0, 1)
  int64_t growth_interval = 2000;  ///< good steps in a row before S grows; >= 1
  bool enabled = true;             ///< false: every call passes through unchanged
};

class GradScaler {
 public:
  /// ValueError naming the option for a non-finite or non-positive init_scale, a growth
  /// factor <= 1, a backoff factor outside (0, 1) or a growth interval < 1.
  explicit GradScaler(const GradScalerOptions& options = {});

  /// loss * S, in loss's dtype (loss itself when disabled).
  Tensor scale(const Tensor& loss) const;
  /// Divides every gradient of opt's parameters by S, in place, and records whether any
  /// was inf or NaN. MisuseError if called twice before update(), or after step();
  /// DTypeError for a float16 or bfloat16 gradient (keep float32 master weights).
  void unscale_(Optimizer& opt);
  /// unscale_ unless it ran already; then opt.step() unless a gradient was inf or NaN.
  /// Returns whether opt stepped. MisuseError if called twice before update().
  bool step(Optimizer& opt);
  /// S *= backoff_factor after a step that found inf or NaN (and the run of good steps
  /// restarts), else the run grows by one and, once it reaches growth_interval, S *=
  /// growth_factor (unless that overflows float32) and the run restarts. MisuseError if
  /// neither unscale_ nor step ran since the last update().
  void update();

  double get_scale() const { return options_.enabled ? static_cast<double>(scale_) : 1.0; }
  int64_t growth_tracker() const { return growth_tracker_; }
  /// Whether the gradients unscaled since the last update() held an inf or NaN.
  bool found_inf() const { return found_inf_; }
  const GradScalerOptions& options() const { return options_; }

  /// The state as one line of text for a checkpoint: S, the options and the run of good
  /// steps, each number so that it reads back exactly.
  std::string state_string() const;
  /// Restores what state_string wrote. ValueError naming the text when it is malformed or
  /// its options are invalid; the scaler is unchanged then. MisuseError between an
  /// unscale_ or step() and its update().
  void load_state_string(const std::string& text);

 private:
  enum class Stage { kReady, kUnscaled, kStepped };
  GradScalerOptions options_;
  float scale_;                // a float32, as PyTorch keeps it
  int64_t growth_tracker_{0};  // good steps in a row since the scale last changed
  bool found_inf_ = false;
  Stage stage_ = Stage::kReady;
};

}  // namespace tg::nn
