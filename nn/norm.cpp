// nn/norm.cpp — RMSNorm and LayerNorm: parameters at their PyTorch starting values, forward.
#include "nn/norm.h"

namespace tg::nn {
namespace {

void check_settings(const char* layer, int64_t c, double eps, DType dtype) {
  TG_CHECK(c > 0, ValueError, "{}: normalized_shape must be positive, got {}", layer, c);
  TG_CHECK(eps > 0.0, ValueError, "{}: eps must be > 0, got {}", layer, eps);
  TG_CHECK(is_floating_point(dtype), DTypeError, "{}: dtype must be floating point, got {}", layer,
           dtype);
}

void check_input(const char* layer, const Tensor& x, int64_t c) {
  TG_CHECK(x.dim() >= 1 && x.size(-1) == c, ShapeError,
           "{}: input of shape {} does not end in normalized_shape ({})", layer, x.shape(), c);
}

// Python prints floats by repr(): 1e-05, 0.001, 1e-06 ... fmt's "{}" gives the same text.
std::string affine_repr(int64_t c, double eps, bool affine) {
  return fmt::format("({},), eps={}, elementwise_affine={}", c, eps, affine ? "True" : "False");
}

}  // namespace

RMSNorm::RMSNorm(int64_t c, RMSNormOptions options)
    : UnaryModule("RMSNorm"), normalized_shape(c), eps(options.eps) {
  check_settings("RMSNorm", c, eps, options.dtype);
  register_parameter("weight", weight, ones({c}, options.dtype));
}

Tensor RMSNorm::forward(const Tensor& x) {
  check_input("RMSNorm", x, normalized_shape);
  return rms_norm(x, weight, eps);
}

AddRmsNormOutput RMSNorm::add_forward(const Tensor& residual, const Tensor& branch) {
  check_input("RMSNorm", residual, normalized_shape);
  return add_rms_norm(residual, branch, weight, eps);
}

std::string RMSNorm::extra_repr() const { return affine_repr(normalized_shape, eps, true); }

LayerNorm::LayerNorm(int64_t c, LayerNormOptions options)
    : UnaryModule("LayerNorm"), normalized_shape(c), eps(options.eps) {
  check_settings("LayerNorm", c, eps, options.dtype);
  if (options.elementwise_affine) {
    register_parameter("weight", weight, ones({c}, options.dtype));
    if (options.bias) register_parameter("bias", bias, zeros({c}, options.dtype));
  }
}

Tensor LayerNorm::forward(const Tensor& x) {
  check_input("LayerNorm", x, normalized_shape);
  return layer_norm(x, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  return affine_repr(normalized_shape, eps, weight.defined());
}

}  // namespace tg::nn
