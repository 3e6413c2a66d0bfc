// file: examples/course/loop_forget_zero_grad.cpp
// Chapter 15: backward ADDS into .grad. Three backward passes without zero_grad leave 1x, 2x,
// 3x the gradient; a training loop that forgets zero_grad steps along the running sum of
// every gradient so far, and overshoots where the correct loop converges.
#include <fmt/format.h>

#include <string>

#include "core/core.h"
#include "nn/nn.h"

namespace nn = tg::nn;

int main() {
  tg::Generator data_gen(7);
  const tg::Tensor x = tg::randn({32, 3}, tg::kFloat64, data_gen);
  const tg::Tensor y = tg::linear(x, tg::tensor({1.0, -2.0, 0.5}, {1, 3}));

  {
    tg::Generator gen(1);
    nn::Linear model(3, 1, {.bias = false, .dtype = tg::kFloat64}, gen);
    for (int pass = 1; pass <= 3; ++pass) {
      tg::mse_loss(model(x), y).backward();  // same weights, same loss, no zero_grad
      fmt::print("after backward {}: weight.grad[0] = {:.6f}\n", pass,
                 model.weight.grad().to_vector<double>()[0]);
    }
  }

  fmt::print("\nSGD lr = 0.05  {:>12} {:>14}\n", "zero_grad", "no zero_grad");
  std::vector<std::vector<double>> losses(2);
  for (int forget = 0; forget < 2; ++forget) {
    tg::Generator gen(1);
    nn::Linear model(3, 1, {.bias = false, .dtype = tg::kFloat64}, gen);
    nn::SGD opt(model.parameters(), {.lr = 0.05});
    for (int step = 0; step <= 40; ++step) {
      const tg::Tensor loss = tg::mse_loss(model(x), y);
      losses[forget].push_back(loss.item<double>());
      if (!forget) opt.zero_grad();
      loss.backward();
      opt.step();
    }
  }
  for (int step : {0, 1, 2, 3, 5, 10, 20, 40})
    fmt::print("  step {:>2}      {:>12.6f} {:>14.6f}\n", step, losses[0][step], losses[1][step]);
}
