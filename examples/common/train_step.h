// examples/common/train_step.h — one training step, the five steps of chapter 15 (forward,
// loss, zero_grad, backward, step), shared by moons, fashion_mnist and tiny_lm.
// Course: docs/course/15-training-loop.md (whose exercise is its body).
#pragma once

#include <vector>

#include "nn/nn.h"

namespace tg::examples {

/// What one step reports: the training loss, and the global norm of the gradients it took
/// (before any clipping).
struct StepResult {
  double loss;
  double grad_norm;
};

/// One step on the batch (x, y): logits = model(x), loss = cross_entropy(logits, y), then
/// zero_grad, backward and the optimizer's step. The gradient norm is read between backward
/// and step; with clip > 0 the gradients are scaled down to that norm first
/// (nn::clip_grad_norm), else only measured (nn::global_grad_norm). `params` are the model's
/// parameters, the ones `opt` updates.
template <class Model>
StepResult train_step(Model& model, nn::Optimizer& opt, const Tensor& x, const Tensor& y,
                      const std::vector<Tensor>& params, double clip = 0) {
  // exercise training_loop.step: begin
  const Tensor loss = cross_entropy(model(x), y);
  opt.zero_grad();
  loss.backward();
  const double norm = clip > 0 ? nn::clip_grad_norm(params, clip) : nn::global_grad_norm(params);
  opt.step();
  return {static_cast<double>(loss.item<float>()), norm};
  // exercise training_loop.step: end
}

}  // namespace tg::examples
