// file: examples/course/loop_five_steps.cpp
// Chapter 15: one training step taken apart. After each of the five steps (forward, loss,
// zero_grad, backward, step) it prints what changed on the tape and in the parameters' .grad.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/core.h"
#include "nn/nn.h"

namespace nn = tg::nn;

int main() {
  tg::Generator gen(15);
  nn::Linear model(3, 1, {.dtype = tg::kFloat64}, gen);
  nn::SGD opt(model.parameters(), {.lr = 0.1});
  const tg::Tensor x = tg::randn({4, 3}, tg::kFloat64, gen);
  const tg::Tensor y = tg::randn({4, 1}, tg::kFloat64, gen);
  // Pretend a previous step left a gradient behind.
  model.weight.set_grad(tg::ones({1, 3}, tg::kFloat64));

  // 1. forward: every op records a node; the nodes save what their backward needs.
  const tg::Tensor pred = model(x);
  fmt::print("1 forward:   pred made by '{}', which saved {} bytes\n", pred.grad_fn()->name(),
             pred.grad_fn()->saved_bytes());
  // 2. loss: one more node, on top of the others; a scalar.
  const tg::Tensor loss = tg::mse_loss(pred, y);
  fmt::print("2 loss:      {:.6f}, made by '{}'\n", loss.item<double>(), loss.grad_fn()->name());
  // 3. zero_grad: forget the previous step's gradients (the tape is untouched).
  fmt::print("3 zero_grad: weight.grad before: {}", model.weight.grad());
  opt.zero_grad();
  fmt::print(", after: defined = {}\n", model.weight.grad().defined());
  // 4. backward: walks the tape from the loss, fills every leaf's .grad, frees saved tensors.
  loss.backward();
  fmt::print("4 backward:  weight.grad = [{:.6f}], bias.grad = [{:.6f}]\n",
             fmt::join(model.weight.grad().to_vector<double>(), ", "),
             fmt::join(model.bias.grad().to_vector<double>(), ", "));
  fmt::print("             '{}' now holds {} saved bytes\n", pred.grad_fn()->name(),
             pred.grad_fn()->saved_bytes());
  try {
    loss.backward();
  } catch (const tg::Error& e) {
    fmt::print("             a second backward: {}\n", e.what());
  }
  // 5. step: w <- w - lr * grad, in place; the version counter of w's storage goes up.
  const std::vector<double> before = model.weight.to_vector<double>();
  opt.step();
  const std::vector<double> after = model.weight.to_vector<double>();
  fmt::print("5 step:      weight [{:.6f}] -> [{:.6f}]\n", fmt::join(before, ", "),
             fmt::join(after, ", "));
  fmt::print("             new loss {:.6f}\n", tg::mse_loss(model(x), y).item<double>());
}
