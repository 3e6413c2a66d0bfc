// nn/linear.cpp — Linear: registration, PyTorch's default init, forward.
#include "nn/linear.h"

#include <cmath>

#include "nn/init.h"

namespace tg::nn {

Linear::Linear(int64_t in, int64_t out, LinearOptions options, Generator& gen)
    : UnaryModule("Linear"), in_features(in), out_features(out) {
  TG_CHECK(in > 0 && out > 0, ValueError,
           "Linear: in_features ({}) and out_features ({}) must be positive", in, out);
  TG_CHECK(is_floating_point(options.dtype), DTypeError,
           "Linear: dtype must be floating point, got {}", options.dtype);
  register_parameter("weight", weight, empty({out, in}, options.dtype));
  // kaiming_uniform_ with a = sqrt(5): gain = sqrt(2 / (1 + 5)), so
  // bound = sqrt(3) * gain / sqrt(in) = 1 / sqrt(in).
  init::kaiming_uniform_(weight, std::sqrt(5.0), init::FanMode::kFanIn,
                         init::Nonlinearity::kLeakyReLU, gen);
  if (options.bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    register_parameter("bias", bias, empty({out}, options.dtype));
    init::uniform_(bias, -bound, bound, gen);
  }
}

Tensor Linear::forward(const Tensor& x) { return linear(x, weight, bias); }

std::string Linear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features, out_features,
                     bias.defined() ? "True" : "False");
}

}  // namespace tg::nn
