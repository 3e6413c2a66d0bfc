// nn/init.h — filling parameters with random (or constant) starting values (torch.nn.init).
//
// Every function writes into `t` in place under NoGradGuard (so it works on parameters,
// which require grad), draws only from the Generator it is given, and returns `t`.
// Elements are drawn in row-major order, so a seed fixes the result on every machine.
// Random values are computed in double and rounded once to t's dtype.
//
// Fans, as PyTorch computes them for a weight of shape (out, in, k1, k2, ...):
//   receptive = k1 * k2 * ...   (1 for a Linear weight (out, in))
//   fan_in    = in * receptive,   fan_out = out * receptive
// They are undefined for 0-d and 1-d tensors (ValueError, as in PyTorch).
//
// The scaled initialisations keep the variance of activations (fan_in) or of gradients
// (fan_out) roughly constant from layer to layer:
//   xavier (Glorot & Bengio 2010):  std = gain * sqrt(2 / (fan_in + fan_out))
//   kaiming (He et al. 2015):       std = gain / sqrt(fan),  fan = fan_in or fan_out
// and the uniform variants use U(-bound, bound) with bound = sqrt(3) * std (same variance).
#pragma once

#include <utility>

#include "core/core.h"
#include "ops/ops.h"

namespace tg::nn::init {

/// The nonlinearity that follows a layer, for calculate_gain (torch.nn.init.calculate_gain).
enum class Nonlinearity { kLinear, kSigmoid, kTanh, kReLU, kLeakyReLU, kSELU };

/// Which fan kaiming_* scales by: fan_in preserves the forward activations' variance,
/// fan_out the backward gradients'.
enum class FanMode { kFanIn, kFanOut };

/// The recommended gain for a nonlinearity: linear, sigmoid 1; tanh 5/3; relu sqrt(2);
/// leaky_relu sqrt(2 / (1 + slope^2)) with `param` the negative slope; selu 3/4.
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);

/// {fan_in, fan_out} of `t` (see the top of this file); ValueError for fewer than 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

/// U(low, high); requires low <= high.
Tensor uniform_(const Tensor& t, double low = 0.0, double high = 1.0,
                Generator& gen = default_generator());
/// N(mean, std^2); requires std >= 0.
Tensor normal_(const Tensor& t, double mean = 0.0, double std = 1.0,
               Generator& gen = default_generator());
/// N(mean, std^2) restricted to [a, b], by RESAMPLING: each element draws normals until one
/// lands in [a, b] (the exact truncated distribution; PyTorch uses the inverse CDF, which
/// gives the same distribution but other numbers). Requires std > 0, a < b, and at least
/// 1e-4 of the normal's mass inside [a, b] (otherwise ValueError, rather than looping for
/// a very long time).
Tensor trunc_normal_(const Tensor& t, double mean = 0.0, double std = 1.0, double a = -2.0,
                     double b = 2.0, Generator& gen = default_generator());
/// Fills with `value`.
Tensor constant_(const Tensor& t, double value);
Tensor zeros_(const Tensor& t);
Tensor ones_(const Tensor& t);
/// U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(const Tensor& t, double gain = 1.0, Generator& gen = default_generator());
/// N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(const Tensor& t, double gain = 1.0, Generator& gen = default_generator());
/// U(-bound, bound), bound = sqrt(3) * calculate_gain(nonlinearity, a) / sqrt(fan), as
/// torch.nn.init.kaiming_uniform_ (same defaults). `a` is the leaky_relu negative slope.
/// Linear's default init is kaiming_uniform_(w, sqrt(5)), i.e. bound = 1 / sqrt(fan_in).
Tensor kaiming_uniform_(const Tensor& t, double a = 0.0, FanMode mode = FanMode::kFanIn,
                        Nonlinearity nonlinearity = Nonlinearity::kLeakyReLU,
                        Generator& gen = default_generator());
/// N(0, std^2), std = calculate_gain(nonlinearity, a) / sqrt(fan).
Tensor kaiming_normal_(const Tensor& t, double a = 0.0, FanMode mode = FanMode::kFanIn,
                       Nonlinearity nonlinearity = Nonlinearity::kLeakyReLU,
                       Generator& gen = default_generator());

}  // namespace tg::nn::init
