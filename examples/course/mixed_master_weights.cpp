// file: examples/course/mixed_master_weights.cpp
// Chapter 20: why the weights stay float32. One SGD step of lr * grad on a bfloat16 weight
// of 1 lands on a neighbour of 1 or nowhere; a hundred steps of 0.001 leave it at 1, while
// a float32 master weight, whose bfloat16 copy the forward uses under autocast, moves.
#include <fmt/format.h>

#include <cmath>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

int main() {
  // The neighbours of 1 in bfloat16: 8 significant bits, so 2^-7 apart above 1 and 2^-8
  // apart below it (1 is a power of two: the exponent drops below it).
  const float above = static_cast<float>(tg::BFloat16::from_bits(0x3f81));
  const float below = static_cast<float>(tg::BFloat16::from_bits(0x3f7f));
  fmt::print("bfloat16 neighbours of 1: {} (1 + 2^{}) and {} (1 - 2^{})\n", above,
             std::ilogb(above - 1), below, std::ilogb(1 - below));
  fmt::print("a step down lands only when larger than half the gap below, {}\n\n", (1 - below) / 2);

  // One step from 1, rounded to bfloat16: what was asked for, and what the weight moved.
  fmt::print("{:>10} {:>12} {:>10}\n", "step", "1 - step", "moved by");
  for (const float step : {0.001f, 0.00195f, 0.002f, 0.003f, 0.004f, 0.006f, 0.008f}) {
    const float landed = static_cast<float>(tg::BFloat16(1.0f - step));
    fmt::print("{:>10} {:>12} {:>10}\n", step, landed, 1.0f - landed);
  }

  // A hundred SGD steps of lr * grad = 0.001 * 1: on a bfloat16 weight, on a float32 one.
  tg::Tensor low = tg::tensor({1.0}).to(tg::kBFloat16).requires_grad_();
  tg::Tensor master = tg::tensor({1.0f}).requires_grad_();
  tg::nn::SGD opt_low({low}, {.lr = 1e-3}), opt_master({master}, {.lr = 1e-3});
  for (int i = 0; i < 100; ++i) {
    low.set_grad(tg::tensor({1.0}).to(tg::kBFloat16));
    master.set_grad(tg::tensor({1.0f}));
    opt_low.step();
    opt_master.step();
  }
  fmt::print("\nafter 100 steps of 0.001: bfloat16 weight {}, float32 weight {}\n",
             low.to(tg::kFloat32).item<float>(), master.item<float>());

  // Mixed precision: the float32 master weight w is the parameter; under autocast the
  // forward multiplies by its bfloat16 copy, and the backward brings a float32 gradient
  // home. loss = w * x with x = 1, so the gradient is 1 at every step.
  tg::Tensor w = tg::tensor({1.0f}).reshape({1, 1}).requires_grad_();
  tg::nn::SGD opt({w}, {.lr = 1e-3});
  const tg::Tensor x = tg::ones({1, 1});
  fmt::print("\n{:>5} {:>12} {:>16} {:>14}\n", "step", "master w", "bfloat16 copy", "w.grad dtype");
  for (int step = 1; step <= 100; ++step) {
    tg::Tensor loss;
    {
      tg::AutocastGuard autocast(tg::kBFloat16);
      const tg::Tensor y = tg::linear(x, w);  // runs in bfloat16, on w's bfloat16 copy
      loss = tg::sum(y.to(tg::kFloat32));
    }
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (step <= 6 || step % 25 == 0) {  // the copy: what the next forward multiplies by
      const float copy = w.to(tg::kBFloat16).to(tg::kFloat32).item<float>();
      fmt::print("{:>5} {:>12} {:>16} {:>14}\n", step, w.item<float>(), copy,
                 tg::dtype_name(w.grad().dtype()));
    }
  }
}
