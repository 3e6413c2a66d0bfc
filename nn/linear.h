// nn/linear.h — Linear: y = x W^T + b (torch.nn.Linear).
//
// Shapes: x (..., in_features) -> y (..., out_features); weight (out_features, in_features),
// bias (out_features), PyTorch's layout, so state_dict keys and tensors match nn.Linear.
#pragma once

#include "nn/module.h"

namespace tg::nn {

/// Constructor settings of Linear: `Linear(784, 256, {.bias = false})`.
struct LinearOptions {
  bool bias = true;        ///< learn an additive bias
  DType dtype = kFloat32;  ///< dtype of weight and bias
};

/// A fully connected layer, like torch.nn.Linear. PyTorch's default init, drawn from `gen`:
/// weight ~ U(-k, k) (kaiming_uniform_ with a = sqrt(5)), then bias ~ U(-k, k), with
/// k = 1 / sqrt(in_features).
class Linear : public UnaryModule {
 public:
  Linear(int64_t in_features, int64_t out_features, LinearOptions options = {},
         Generator& gen = default_generator());

  /// linear(x, weight, bias): (..., in_features) -> (..., out_features).
  Tensor forward(const Tensor& x) override;
  /// "in_features=784, out_features=256, bias=True"
  std::string extra_repr() const override;

  const int64_t in_features;
  const int64_t out_features;
  Tensor weight;  ///< (out_features, in_features)
  Tensor bias;    ///< (out_features), or undefined with {.bias = false}
};

}  // namespace tg::nn
