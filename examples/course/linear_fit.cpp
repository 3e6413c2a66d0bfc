// file: examples/course/linear_fit.cpp
// Chapter 4: linear regression with linear + mse_loss and plain gradient descent.
// The data come from a known line, y = x W_true^T + b_true, so we can watch W and b find it.
#include <fmt/format.h>

#include "core/core.h"
#include "ops/ops.h"

int main() {
  tg::Generator gen(0);
  const tg::Tensor w_true = tg::tensor({2.0, -3.0, 0.5}, {1, 3});
  const tg::Tensor b_true = tg::tensor({1.0});
  const tg::Tensor x = tg::randn({64, 3}, tg::kFloat64, gen);  // 64 samples, 3 features
  const tg::Tensor y = tg::linear(x, w_true, b_true);          // targets (64, 1)

  tg::Tensor w = tg::zeros({1, 3}, tg::kFloat64).requires_grad_();
  tg::Tensor b = tg::zeros({1}, tg::kFloat64).requires_grad_();
  const double lr = 0.1;
  for (int step = 0; step <= 60; ++step) {
    const tg::Tensor loss = tg::mse_loss(tg::linear(x, w, b), y);
    tg::backward(loss);
    if (step % 10 == 0) fmt::print("step {:2d}  loss {:.6f}\n", step, loss.item<double>());
    tg::NoGradGuard no_grad;  // the update itself is not part of the model
    w.copy_(tg::sub(w, tg::mul(w.grad(), lr)));
    b.copy_(tg::sub(b, tg::mul(b.grad(), lr)));
    w.set_grad(tg::Tensor());
    b.set_grad(tg::Tensor());
  }
  const std::vector<double> wv = w.to_vector<double>();
  fmt::print("learned W = [{:.4f}, {:.4f}, {:.4f}], b = {:.4f}\n", wv[0], wv[1], wv[2],
             b.item<double>());
}
