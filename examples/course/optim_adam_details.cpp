// file: examples/course/optim_adam_details.cpp
// Chapter 14: two details of Adam, measured. (1) Bias correction: the first step moves every
// weight by lr, whatever the size of its gradient; without the correction it would move by
// lr * 0.1 / sqrt(0.001) = 3.16 lr. (2) Weight decay: Adam's L2 term goes through the
// adaptive denominator, AdamW's decoupled decay does not.
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"

namespace nn = tg::nn;

int main() {
  // (1) One Adam step on three weights whose gradients differ by eight orders of magnitude.
  const std::vector<double> g = {1e-4, 1.0, 1e4};
  tg::Tensor w = tg::zeros({3}, tg::kFloat64).requires_grad_();
  nn::Adam adam({w}, {.lr = 0.01});
  w.set_grad(tg::tensor(g));
  adam.step();
  fmt::print("first Adam step, lr = 0.01\n");
  for (size_t i = 0; i < g.size(); ++i) {
    const double m = 0.1 * g[i], v = 0.001 * g[i] * g[i];  // m_1 and v_1, not corrected
    fmt::print("  grad {:>7g}: moved by {:+.6f}; without bias correction {:+.6f}\n", g[i],
               w.to_vector<double>()[i], -0.01 * m / (std::sqrt(v) + 1e-8));
  }

  // (2) Weight 0 gets no gradient at all, weight 1 a constant gradient of 10; 100 steps with
  // lr = 0.01 and weight_decay = 0.1, from w = (1, 1).
  fmt::print("\n100 steps, grad = (0, 10), lr = 0.01, weight_decay = 0.1\n");
  for (const std::string which : {"Adam, no decay", "Adam + L2", "AdamW"}) {
    tg::Tensor p = tg::ones({2}, tg::kFloat64).requires_grad_();
    std::unique_ptr<nn::Optimizer> opt;
    if (which == "Adam, no decay") opt = std::make_unique<nn::Adam>(std::vector{p});
    if (which == "Adam + L2")
      opt = std::make_unique<nn::Adam>(std::vector{p}, nn::AdamOptions{.weight_decay = 0.1});
    if (which == "AdamW")
      opt = std::make_unique<nn::AdamW>(std::vector{p}, nn::AdamWOptions{.weight_decay = 0.1});
    opt->set_lr(0.01);
    for (int step = 0; step < 100; ++step) {
      p.set_grad(tg::tensor({0.0, 10.0}));
      opt->step();
    }
    const std::vector<double> v = p.to_vector<double>();
    fmt::print("  {:<15} w = ({:.4f}, {:+.4f})\n", which, v[0], v[1]);
  }
  fmt::print("  AdamW's factor alone: (1 - 0.01 * 0.1)^100 = {:.4f}\n", std::pow(1 - 0.001, 100));
}
