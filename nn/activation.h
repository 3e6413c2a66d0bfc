// nn/activation.h — activation layers and Dropout: modules without parameters.
//
// Each wraps the op of the same name (ops/activation.h, ops/dropout.h) so that it can sit in
// a Sequential and print like PyTorch. Shapes: any x -> the same shape.
#pragma once

#include "nn/module.h"

namespace tg::nn {

/// max(x, 0), like torch.nn.ReLU.
class ReLU : public UnaryModule {
 public:
  ReLU() : UnaryModule("ReLU") {}
  Tensor forward(const Tensor& x) override { return relu(x); }
};

/// x * sigmoid(x), like torch.nn.SiLU.
class SiLU : public UnaryModule {
 public:
  SiLU() : UnaryModule("SiLU") {}
  Tensor forward(const Tensor& x) override { return silu(x); }
};

/// Constructor settings of GELU: `GELU({.approximate = true})`.
struct GELUOptions {
  /// false: the exact x * Phi(x) (PyTorch's approximate='none'); true: the tanh formula
  /// (approximate='tanh').
  bool approximate = false;
};

/// The Gaussian error linear unit, like torch.nn.GELU(approximate).
class GELU : public UnaryModule {
 public:
  explicit GELU(GELUOptions options = {}) : UnaryModule("GELU"), approximate(options.approximate) {}
  Tensor forward(const Tensor& x) override { return gelu(x, approximate); }
  /// "approximate='none'" or "approximate='tanh'"
  std::string extra_repr() const override;

  const bool approximate;
};

/// Inverted dropout, like torch.nn.Dropout(p): while is_training(), each element is zeroed
/// with probability p and the rest scaled by 1 / (1 - p); in eval mode it returns x.
///
/// The random mask comes from the Generator given to the constructor, which the module
/// only POINTS TO (it must outlive the module). Keeping the generator outside the model
/// lets the training loop own the one stream of randomness, seed it, and save its state
/// (seed, offset) in a checkpoint, so that a resumed run draws the same masks.
class Dropout : public UnaryModule {
 public:
  explicit Dropout(double p = 0.5, Generator& gen = default_generator());
  Tensor forward(const Tensor& x) override;
  /// "p=0.1"
  std::string extra_repr() const override;

  const double p;

 private:
  Generator* gen_;
};

}  // namespace tg::nn
