// nn/norm.h — normalisation layers over the last dim: RMSNorm and LayerNorm.
//
// Shapes: x (..., C) -> (..., C), with C = normalized_shape; weight and bias (C).
#pragma once

#include "nn/module.h"

namespace tg::nn {

/// Constructor settings of RMSNorm: `RMSNorm(64, {.eps = 1e-6})`.
struct RMSNormOptions {
  double eps = 1e-5;       ///< added to mean(x^2) before the square root
  DType dtype = kFloat32;  ///< dtype of weight
};

/// y = x / sqrt(mean(x^2) + eps) * weight, like torch.nn.RMSNorm(C, eps) (PyTorch >= 2.4;
/// its eps=None default means machine epsilon, ours is 1e-5). weight starts at ones.
class RMSNorm : public UnaryModule {
 public:
  explicit RMSNorm(int64_t normalized_shape, RMSNormOptions options = {});

  /// rms_norm(x, weight, eps) over the last dim of x, which must be normalized_shape.
  Tensor forward(const Tensor& x) override;
  /// The residual stream takes a branch's output and is normalised for the next branch, in
  /// one fused op (add_rms_norm, ops/rms_norm.h): .residual = residual + branch, the new
  /// stream; .out = this norm of it. A pre-norm Transformer block calls it between its two
  /// branches (nn/transformer.cpp).
  AddRmsNormOutput add_forward(const Tensor& residual, const Tensor& branch);
  /// "(64,), eps=1e-05, elementwise_affine=True", as PyTorch prints it.
  std::string extra_repr() const override;

  const int64_t normalized_shape;
  const double eps;
  Tensor weight;  ///< (C), initialised to 1
};

/// Constructor settings of LayerNorm: `LayerNorm(64, {.bias = false})`.
struct LayerNormOptions {
  double eps = 1e-5;               ///< added to the variance before the square root
  bool elementwise_affine = true;  ///< learn weight (and bias, if `bias`)
  bool bias = true;                ///< learn a bias too (only with elementwise_affine)
  DType dtype = kFloat32;          ///< dtype of weight and bias
};

/// y = (x - mean) / sqrt(var + eps) * weight + bias over the last dim (biased variance),
/// like torch.nn.LayerNorm(C, eps, elementwise_affine, bias). weight starts at ones, bias
/// at zeros.
class LayerNorm : public UnaryModule {
 public:
  explicit LayerNorm(int64_t normalized_shape, LayerNormOptions options = {});

  /// layer_norm(x, weight, bias, eps) over the last dim of x.
  Tensor forward(const Tensor& x) override;
  /// "(64,), eps=1e-05, elementwise_affine=True", as PyTorch prints it.
  std::string extra_repr() const override;

  const int64_t normalized_shape;
  const double eps;
  Tensor weight;  ///< (C), or undefined without elementwise_affine
  Tensor bias;    ///< (C), or undefined without elementwise_affine or bias
};

}  // namespace tg::nn
