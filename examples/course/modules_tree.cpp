// file: examples/course/modules_tree.cpp
// Chapter 13: a module written by hand (named members registered in the constructor), its
// printed tree, its parameter names, a state dict round trip, the errors of a strict load,
// train/eval and zero_grad.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/core.h"
#include "nn/nn.h"

namespace nn = tg::nn;

/// x -> LayerNorm -> MLP(8, 16, 4) -> * scale: one member tensor and two member modules.
class Classifier : public nn::UnaryModule {
 public:
  explicit Classifier(tg::Generator& gen) : UnaryModule("Classifier"), mlp({8, 16, 4}, {}, gen) {
    register_module("norm", norm);
    register_module("mlp", mlp);
    register_parameter("scale", scale, tg::ones({4}));
  }
  tg::Tensor forward(const tg::Tensor& x) override { return tg::mul(mlp(norm(x)), scale); }

  nn::LayerNorm norm{8};
  nn::MLP mlp;
  tg::Tensor scale;
};

int main() {
  tg::Generator gen(13);
  Classifier model(gen);
  fmt::print("{}\n", model);
  for (const auto& [name, p] : model.named_parameters())
    fmt::print("  {:<13} {}  requires_grad={} leaf={}\n", name, p.shape(), p.requires_grad(),
               p.is_leaf());

  // The member IS the parameter: writing through a state dict entry changes model.scale.
  const nn::StateDict state = model.state_dict();
  {
    tg::NoGradGuard no_grad;
    tg::Tensor(state.at("scale")).fill_(2.0);
  }
  fmt::print("after writing state[\"scale\"]: model.scale = [{}]\n",
             fmt::join(model.scale.to_vector<float>(), ", "));

  // A second model loads the first one's state and computes the same output.
  tg::Generator other(99);
  Classifier copy(other);
  copy.load_state_dict(state);
  const tg::Tensor x = tg::randn({2, 8}, tg::kFloat32, gen);
  const float diff = tg::amax(tg::abs(tg::sub(model(x), copy(x)))).item<float>();
  fmt::print("loaded copy: largest output difference {}\n", diff);

  // A strict load lists every problem and loads nothing.
  nn::StateDict bad;
  for (const auto& [name, t] : state) {
    if (name == "mlp.2.bias") continue;                                    // missing
    if (name == "norm.weight") bad.insert(name, tg::ones({4}));            // wrong shape
    else if (name == "mlp.0.weight") bad.insert(name, tg::zeros_like(t));  // fits
    else bad.insert(name == "scale" ? "head.scale" : name, t);             // renamed: unexpected
  }
  try {
    copy.load_state_dict(bad);
  } catch (const tg::ValueError& e) {
    fmt::print("strict load failed:\n{}\n", e.what());
  }
  fmt::print("copy.mlp.0.weight was not zeroed: sum |w| = {:.4f}\n",
             tg::sum(tg::abs(copy.mlp[0].named_parameters()[0].second)).item<float>());

  // train/eval reach every descendant; zero_grad makes every .grad undefined.
  model.eval();
  fmt::print("after eval(): model {}, mlp.0 {}\n", model.is_training(), model.mlp[0].is_training());
  tg::sum(model(x)).backward();
  fmt::print("after backward: scale.grad defined = {}\n", model.scale.grad().defined());
  model.zero_grad();
  fmt::print("after zero_grad: scale.grad defined = {}\n", model.scale.grad().defined());
}
