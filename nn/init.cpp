// nn/init.cpp — the initialisers: draw in double, then one converting copy into t.
#include "nn/init.h"

#include <cmath>
#include <vector>

namespace tg::nn::init {
namespace {

void check_floating(const Tensor& t, const char* op) {
  TG_CHECK(t.defined(), ValueError, "{}: the tensor is undefined", op);
  TG_CHECK(is_floating_point(t.dtype()), DTypeError,
           "{}: random initialisation needs a floating-point tensor, got dtype {}", op, t.dtype());
}

// Writes `values` (row-major, one per element) into t, converting to t's dtype. In place and
// not recorded: NoGradGuard lets copy_ write into a parameter that requires grad.
Tensor write(const Tensor& t, const std::vector<double>& values) {
  NoGradGuard no_grad;
  Tensor dst = t;
  dst.copy_(tensor(values, t.shape()));
  return t;
}

// Standard normals one at a time, from the pairs Generator::normal_pair makes.
class Normals {
 public:
  explicit Normals(Generator& gen) : gen_(gen) {}
  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const auto pair = gen_.normal_pair();
    spare_ = pair[1];
    has_spare_ = true;
    return pair[0];
  }

 private:
  Generator& gen_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// The standard normal CDF.
double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The fan kaiming_* divides by (0 only for a zero-element tensor, which they leave alone).
double fan_for(const Tensor& t, FanMode mode) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return static_cast<double>(mode == FanMode::kFanIn ? fan_in : fan_out);
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::kLinear:
    case Nonlinearity::kSigmoid: return 1.0;
    case Nonlinearity::kTanh: return 5.0 / 3.0;
    case Nonlinearity::kReLU: return std::sqrt(2.0);
    case Nonlinearity::kLeakyReLU: return std::sqrt(2.0 / (1.0 + param * param));
    case Nonlinearity::kSELU: return 3.0 / 4.0;
  }
  tg::detail::raise<ValueError>("calculate_gain: unknown nonlinearity {}",
                                static_cast<int>(nonlinearity));
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  TG_CHECK(t.dim() >= 2, ValueError,
           "calculate_fan_in_and_fan_out: fan in and fan out cannot be computed for a tensor "
           "with fewer than 2 dimensions (shape {})",
           t.shape());
  int64_t receptive = 1;
  for (size_t d = 2; d < t.dim(); ++d) receptive *= t.shape()[d];
  return {t.shape()[1] * receptive, t.shape()[0] * receptive};
}

Tensor uniform_(const Tensor& t, double low, double high, Generator& gen) {
  check_floating(t, "uniform_");
  TG_CHECK(low <= high, ValueError, "uniform_: low ({}) must be <= high ({})", low, high);
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (double& v : values) v = low + (high - low) * gen.uniform_double();
  return write(t, values);
}

Tensor normal_(const Tensor& t, double mean, double std, Generator& gen) {
  check_floating(t, "normal_");
  TG_CHECK(std >= 0.0, ValueError, "normal_: std must be >= 0, got {}", std);
  Normals normals(gen);
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (double& v : values) v = mean + std * normals.next();
  return write(t, values);
}

Tensor trunc_normal_(const Tensor& t, double mean, double std, double a, double b, Generator& gen) {
  check_floating(t, "trunc_normal_");
  TG_CHECK(std > 0.0, ValueError, "trunc_normal_: std must be > 0, got {}", std);
  TG_CHECK(a < b, ValueError, "trunc_normal_: a ({}) must be < b ({})", a, b);
  // The chance that one draw lands in [a, b]; each element needs 1 / mass draws on average.
  const double mass = phi((b - mean) / std) - phi((a - mean) / std);
  TG_CHECK(mass >= 1e-4, ValueError,
           "trunc_normal_: only {:.3g} of N({}, {}^2) lies in [{}, {}]; resampling would take "
           "too long (move [a, b] closer to the mean or widen it)",
           mass, mean, std, a, b);
  Normals normals(gen);
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (double& v : values) {
    do {
      v = mean + std * normals.next();
    } while (v < a || v > b);
  }
  return write(t, values);
}

Tensor constant_(const Tensor& t, double value) {
  TG_CHECK(t.defined(), ValueError, "constant_: the tensor is undefined");
  NoGradGuard no_grad;
  Tensor dst = t;
  dst.fill_(value);
  return t;
}

Tensor zeros_(const Tensor& t) { return constant_(t, 0.0); }
Tensor ones_(const Tensor& t) { return constant_(t, 1.0); }

Tensor xavier_uniform_(const Tensor& t, double gain, Generator& gen) {
  check_floating(t, "xavier_uniform_");
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  if (t.numel() == 0) return t;
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(t, -bound, bound, gen);
}

Tensor xavier_normal_(const Tensor& t, double gain, Generator& gen) {
  check_floating(t, "xavier_normal_");
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  if (t.numel() == 0) return t;
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return normal_(t, 0.0, std, gen);
}

Tensor kaiming_uniform_(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity,
                        Generator& gen) {
  check_floating(t, "kaiming_uniform_");
  const double fan = fan_for(t, mode);
  if (t.numel() == 0) return t;  // as PyTorch: a no-op on zero-element tensors
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(fan);
  const double bound = std::sqrt(3.0) * std;
  return uniform_(t, -bound, bound, gen);
}

Tensor kaiming_normal_(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity,
                       Generator& gen) {
  check_floating(t, "kaiming_normal_");
  const double fan = fan_for(t, mode);
  if (t.numel() == 0) return t;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(fan);
  return normal_(t, 0.0, std, gen);
}

}  // namespace tg::nn::init
