// nn/sequential.h — Sequential (a chain of one-tensor layers) and MLP built on it.
#pragma once

#include <memory>
#include <vector>

#include "nn/module.h"

namespace tg::nn {

/// Layers applied in order, x -> layer0 -> layer1 -> ..., like torch.nn.Sequential. The
/// layers are children named "0", "1", ..., so parameter names are "0.weight", "2.bias", ...
/// exactly as in PyTorch.
class Sequential : public UnaryModule {
 public:
  Sequential() : Sequential("Sequential") {}
  /// `Sequential(std::make_unique<Linear>(2, 8), std::make_unique<ReLU>())`
  template <std::derived_from<UnaryModule>... Ms>
  explicit Sequential(std::unique_ptr<Ms>... layers) : Sequential("Sequential") {
    (push_back(std::move(layers)), ...);
  }

  /// Appends `layer` (named by its position) and returns it.
  UnaryModule& push_back(std::unique_ptr<UnaryModule> layer);
  /// Constructs an M in place, appends it and returns it: `seq.emplace_back<ReLU>()`.
  template <std::derived_from<UnaryModule> M, class... Args>
  M& emplace_back(Args&&... args) {
    auto layer = std::make_unique<M>(std::forward<Args>(args)...);
    M& ref = *layer;
    push_back(std::move(layer));
    return ref;
  }

  /// Each layer in turn; with no layers, x itself.
  Tensor forward(const Tensor& x) override;
  size_t size() const { return layers_.size(); }
  /// Layer i; IndexError outside [0, size()).
  UnaryModule& operator[](size_t i) const;
  auto begin() const { return layers_.begin(); }
  auto end() const { return layers_.end(); }

 protected:
  /// For subclasses such as MLP that print under their own name.
  explicit Sequential(std::string type_name) : UnaryModule(std::move(type_name)) {}

 private:
  std::vector<std::unique_ptr<UnaryModule>> layers_;
};

/// The activation MLP puts between its Linear layers.
enum class Activation { kReLU, kSiLU, kGELU };

/// Constructor settings of MLP: `MLP({784, 256, 10}, {.activation = Activation::kSiLU})`.
struct MLPOptions {
  Activation activation = Activation::kReLU;  ///< after every Linear but the last
  bool bias = true;                           ///< Linear biases
  DType dtype = kFloat32;                     ///< parameter dtype
};

/// A multilayer perceptron: for sizes {784, 256, 128, 10} the chain
///   Linear(784, 256), ReLU, Linear(256, 128), ReLU, Linear(128, 10)
/// (no activation after the last layer: it returns logits). It IS a Sequential, so its
/// layers are named "0" .. "4" and its state_dict keys are those of the PyTorch module
///   torch.nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
///                       nn.Linear(128, 10))
/// i.e. "0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias": weights exported
/// from that PyTorch model load directly. Linear layers draw their init from `gen` in order.
class MLP : public Sequential {
 public:
  /// `sizes` = {in, hidden..., out}: at least two entries, all positive.
  explicit MLP(const std::vector<int64_t>& sizes, MLPOptions options = {},
               Generator& gen = default_generator());
};

}  // namespace tg::nn
