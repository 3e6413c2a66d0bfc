// file: examples/course/optim_rosenbrock.cpp
// Chapter 14: five optimizers on the Rosenbrock function f(x, y) = (1 - x)^2 + 100 (y - x^2)^2,
// whose minimum f = 0 at (1, 1) lies at the bottom of a long, narrow, curved valley. Each run
// starts at (-1.2, 1) and does the five steps of training; the losses are printed side by side.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"

namespace nn = tg::nn;

using MakeOptimizer = std::function<std::unique_ptr<nn::Optimizer>(std::vector<tg::Tensor>)>;

struct Run {
  std::string name;
  std::vector<double> losses;  // at each step of kReport
  double x = 0, y = 0;
};

const std::vector<int> kReport = {0, 10, 100, 500, 1000, 2000, 5000};

Run run(const std::string& name, const MakeOptimizer& make) {
  tg::Tensor x = tg::scalar_tensor(-1.2, tg::kFloat64).requires_grad_();
  tg::Tensor y = tg::scalar_tensor(1.0, tg::kFloat64).requires_grad_();
  const std::unique_ptr<nn::Optimizer> opt = make({x, y});
  Run r{name, {}};
  for (int step = 0; step <= kReport.back(); ++step) {
    const tg::Tensor a = tg::sub(1.0, x), b = tg::sub(y, tg::mul(x, x));
    const tg::Tensor loss = tg::add(tg::mul(a, a), tg::mul(tg::mul(b, b), 100.0));  // forward, loss
    if (std::find(kReport.begin(), kReport.end(), step) != kReport.end())
      r.losses.push_back(loss.item<double>());
    opt->zero_grad();
    loss.backward();
    opt->step();
  }
  r.x = x.item<double>(), r.y = y.item<double>();
  return r;
}

int main() {
  const std::vector<Run> runs = {
      run("SGD lr=1e-3",
          [](auto ps) { return std::make_unique<nn::SGD>(ps, nn::SGDOptions{.lr = 1e-3}); }),
      run("momentum 0.9",
          [](auto ps) {
            return std::make_unique<nn::SGD>(ps, nn::SGDOptions{.lr = 1e-3, .momentum = 0.9});
          }),
      run("Nesterov 0.9",
          [](auto ps) {
            return std::make_unique<nn::SGD>(
                ps, nn::SGDOptions{.lr = 1e-3, .momentum = 0.9, .nesterov = true});
          }),
      run("Adam lr=0.02",
          [](auto ps) { return std::make_unique<nn::Adam>(ps, nn::AdamOptions{.lr = 0.02}); }),
      run("AdamW wd=0.01",
          [](auto ps) {
            return std::make_unique<nn::AdamW>(ps,
                                               nn::AdamWOptions{.lr = 0.02, .weight_decay = 0.01});
          }),
  };
  fmt::print("{:>6}", "step");
  for (const Run& r : runs) fmt::print(" {:>14}", r.name);
  fmt::print("\n");
  for (size_t k = 0; k < kReport.size(); ++k) {
    fmt::print("{:>6}", kReport[k]);
    for (const Run& r : runs) fmt::print(" {:>14.4e}", r.losses[k]);
    fmt::print("\n");
  }
  fmt::print("{:>6}", "(x, y)");
  for (const Run& r : runs) fmt::print(" {:>14}", fmt::format("({:.3f}, {:.3f})", r.x, r.y));
  fmt::print("\n");
}
