// file: examples/course/activations_table.cpp
// Chapter 5: the five activations and their slopes, side by side. For each x, prints f(x)
// and f'(x) as backward computes it (the gradient of sum(f(x)) with respect to x).
#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "core/core.h"
#include "ops/activation.h"

int main() {
  const std::vector<double> xs = {-3.0, -1.0, 0.0, 0.5, 2.0};
  const std::vector<std::pair<std::string, std::function<tg::Tensor(const tg::Tensor&)>>> acts = {
      {"relu", [](const tg::Tensor& x) { return tg::relu(x); }},
      {"sigmoid", [](const tg::Tensor& x) { return tg::sigmoid(x); }},
      {"tanh", [](const tg::Tensor& x) { return tg::tanh(x); }},
      {"silu", [](const tg::Tensor& x) { return tg::silu(x); }},
      {"gelu", [](const tg::Tensor& x) { return tg::gelu(x); }},
      {"gelu_tanh", [](const tg::Tensor& x) { return tg::gelu(x, true); }}};

  fmt::print("{:>10}", "x");
  for (double x : xs) fmt::print("{:>10.1f}", x);
  fmt::print("\n");
  for (const auto& [name, fn] : acts) {
    tg::Tensor x = tg::tensor(xs).requires_grad_();
    const tg::Tensor y = fn(x);
    tg::backward(y, tg::ones_like(y));  // dx_i = f'(x_i)
    fmt::print("{:>10}", name);
    for (double v : y.to_vector<double>()) fmt::print("{:>10.5f}", v);
    fmt::print("\n{:>10}", name + "'");
    for (double v : x.grad().to_vector<double>()) fmt::print("{:>10.5f}", v);
    fmt::print("\n");
  }
}
