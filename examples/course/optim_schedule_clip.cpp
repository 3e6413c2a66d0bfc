// file: examples/course/optim_schedule_clip.cpp
// Chapter 14: the learning rate of CosineWithWarmup over a 1000-step run, and what
// clip_grad_norm does to two gradients whose global norm is 13.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/core.h"
#include "nn/nn.h"

namespace nn = tg::nn;

int main() {
  const nn::CosineWithWarmup schedule{
      .base_lr = 3e-4, .warmup_steps = 100, .total_steps = 1000, .min_lr = 3e-5};
  fmt::print("CosineWithWarmup(base 3e-4, warmup 100, total 1000, min 3e-5)\n");
  for (int64_t step : {0, 1, 49, 99, 100, 325, 550, 775, 999, 1000, 5000})
    fmt::print("  step {:>4}: lr {:.4e}\n", step, schedule(step));

  // Gradients (3, 4) and (12): together a vector of norm sqrt(9 + 16 + 144) = 13.
  tg::Tensor a = tg::zeros({2}, tg::kFloat64).requires_grad_();
  tg::Tensor b = tg::zeros({1}, tg::kFloat64).requires_grad_();
  a.set_grad(tg::tensor({3.0, 4.0}));
  b.set_grad(tg::tensor({12.0}));
  const double before = nn::clip_grad_norm({a, b}, /*max_norm=*/1.0);
  fmt::print("clip_grad_norm(max_norm = 1) returned {} (the norm before clipping)\n", before);
  fmt::print("  grads now ({:.6f}, {:.6f}) and ({:.6f}), global norm {:.7f}\n",
             a.grad().to_vector<double>()[0], a.grad().to_vector<double>()[1],
             b.grad().to_vector<double>()[0], nn::global_grad_norm({a, b}));
  const double again = nn::clip_grad_norm({a, b}, 1.0);
  fmt::print("a second clip finds norm {:.7f} and leaves the grads alone\n", again);
}
