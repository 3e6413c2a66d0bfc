// nn/grad_scaler.cpp — see grad_scaler.h. Tests: tests/nn/grad_scaler_test.cpp.
#include "nn/grad_scaler.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace tg::nn {
namespace {

void check_options(const GradScalerOptions& o, const char* who) {
  TG_CHECK(std::isfinite(o.init_scale) && o.init_scale > 0 &&
               o.init_scale <= std::numeric_limits<float>::max(),
           ValueError, "{}: init_scale must be a positive float32, got {}", who, o.init_scale);
  TG_CHECK(o.growth_factor > 1.0 && std::isfinite(o.growth_factor), ValueError,
           "{}: growth_factor must be > 1, got {}", who, o.growth_factor);
  TG_CHECK(o.backoff_factor > 0.0 && o.backoff_factor < 1.0, ValueError,
           "{}: backoff_factor must be in (0, 1), got {}", who, o.backoff_factor);
  TG_CHECK(o.growth_interval >= 1, ValueError, "{}: growth_interval must be >= 1, got {}", who,
           o.growth_interval);
}

/// g *= inv over n values; returns whether any value was inf or NaN before the multiply.
template <class F>
bool unscale_values(F* g, int64_t n, F inv) {
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) {
    bad = bad || !std::isfinite(g[i]);
    g[i] *= inv;
  }
  return bad;
}

}  // namespace

GradScaler::GradScaler(const GradScalerOptions& options)
    : options_(options), scale_(static_cast<float>(options.init_scale)) {
  check_options(options_, "GradScaler");
}

Tensor GradScaler::scale(const Tensor& loss) const {
  TG_CHECK(loss.defined(), MisuseError, "GradScaler::scale: the loss is undefined");
  if (!options_.enabled) return loss;
  return mul(loss, static_cast<double>(scale_));
}

void GradScaler::unscale_(Optimizer& opt) {
  if (!options_.enabled) return;
  TG_CHECK(stage_ != Stage::kUnscaled, MisuseError,
           "GradScaler::unscale_: already called since the last update(): the gradients are "
           "divided by the scale once per step");
  TG_CHECK(stage_ != Stage::kStepped, MisuseError,
           "GradScaler::unscale_: called after step(); call update() first");
  // Check every dtype before dividing anything.
  for (const Tensor& p : opt.params()) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    TG_CHECK(g.dtype() == kFloat32 || g.dtype() == kFloat64, DTypeError,
             "GradScaler::unscale_: a {} gradient of shape {}; keep the parameters float32 "
             "(master weights) and run the low-precision ops under them",
             g.dtype(), g.shape());
    TG_CHECK(g.is_contiguous(), MisuseError,
             "GradScaler::unscale_: a non-contiguous gradient of shape {}", g.shape());
  }
  // 1 / S rounded to float32, as PyTorch computes it (in double, then float).
  const double inv = static_cast<double>(static_cast<float>(1.0 / static_cast<double>(scale_)));
  bool bad = false;
  for (const Tensor& p : opt.params()) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    if (g.dtype() == kFloat32) {
      bad = unscale_values(g.data<float>(), g.numel(), static_cast<float>(inv)) || bad;
    } else {
      bad = unscale_values(g.data<double>(), g.numel(), inv) || bad;
    }
  }
  found_inf_ = bad;
  stage_ = Stage::kUnscaled;
}

bool GradScaler::step(Optimizer& opt) {
  if (!options_.enabled) {
    opt.step();
    return true;
  }
  TG_CHECK(stage_ != Stage::kStepped, MisuseError,
           "GradScaler::step: already called since the last update()");
  if (stage_ == Stage::kReady) unscale_(opt);
  stage_ = Stage::kStepped;
  if (found_inf_) return false;  // the scaled backward overflowed: skip this step
  opt.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  TG_CHECK(stage_ != Stage::kReady, MisuseError,
           "GradScaler::update: neither unscale_ nor step ran since the last update(), so "
           "there is no inf check to update from");
  // exercise grad_scaler.update: begin
  if (found_inf_) {
    scale_ = static_cast<float>(static_cast<double>(scale_) * options_.backoff_factor);
    growth_tracker_ = 0;
  } else if (++growth_tracker_ == options_.growth_interval) {
    const auto grown = static_cast<float>(static_cast<double>(scale_) * options_.growth_factor);
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  }
  // exercise grad_scaler.update: end
  found_inf_ = false;
  stage_ = Stage::kReady;
}

std::string GradScaler::state_string() const {
  return fmt::format("{} {} {} {} {}", scale_, options_.growth_factor, options_.backoff_factor,
                     options_.growth_interval, growth_tracker_);
}

void GradScaler::load_state_string(const std::string& text) {
  TG_CHECK(stage_ == Stage::kReady, MisuseError,
           "GradScaler::load_state_string: between a step and its update()");
  std::istringstream words(text);
  double scale = 0;
  GradScalerOptions o = options_;
  int64_t tracker = -1;
  words >> scale >> o.growth_factor >> o.backoff_factor >> o.growth_interval >> tracker;
  TG_CHECK(!words.fail() && (words >> std::ws).eof(), ValueError,
           "GradScaler: '{}' is not '<scale> <growth_factor> <backoff_factor> "
           "<growth_interval> <growth_tracker>'",
           text);
  o.init_scale = scale;
  check_options(o, "GradScaler");
  TG_CHECK(tracker >= 0 && tracker < o.growth_interval, ValueError,
           "GradScaler: growth_tracker {} is outside [0, growth_interval {})", tracker,
           o.growth_interval);
  options_ = o;
  scale_ = static_cast<float>(scale);
  growth_tracker_ = tracker;
}

}  // namespace tg::nn
