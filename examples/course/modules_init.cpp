// file: examples/course/modules_init.cpp
// Chapter 13: PyTorch's default init of Linear and Embedding, and why the scale of a weight
// must shrink with its fan-in: the root mean square of the activations through 8 layers of
// Linear(256, 256) + ReLU, for three ways of drawing the weights.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "core/core.h"
#include "nn/nn.h"

namespace nn = tg::nn;
namespace init = tg::nn::init;

double rms(const tg::Tensor& t) { return std::sqrt(tg::mean(tg::mul(t, t)).item<float>()); }

double max_abs(const tg::Tensor& t) { return tg::amax(tg::abs(t)).item<float>(); }

int main() {
  tg::Generator gen(0);
  const nn::Linear fc(784, 256, {}, gen);
  fmt::print("Linear(784, 256): 1/sqrt(784) = {:.5f}\n", 1 / std::sqrt(784.0));
  fmt::print("  weight: max |w| {:.5f}, rms {:.5f} (1/sqrt(3 * 784) = {:.5f})\n",
             max_abs(fc.weight), rms(fc.weight), 1 / std::sqrt(3 * 784.0));
  fmt::print("  bias:   max |b| {:.5f}\n", max_abs(fc.bias));
  const nn::Embedding emb(1000, 64, {}, gen);
  fmt::print("Embedding(1000, 64): weight rms {:.4f}, max |w| {:.3f}\n", rms(emb.weight),
             max_abs(emb.weight));

  // Eight Linear(256, 256, bias=False) + ReLU layers, the same input, three inits.
  const tg::Tensor x = tg::randn({512, 256}, tg::kFloat32, gen);
  fmt::print("\n  {:<24} {:>8} {:>8} {:>8} {:>8}\n", "rms after layer", 1, 2, 4, 8);
  for (const std::string which : {"N(0, 1)", "PyTorch default", "kaiming_normal_ (ReLU)"}) {
    tg::Generator g(1);
    tg::NoGradGuard no_grad;
    tg::Tensor h = x;
    fmt::print("  {:<24}", which);
    for (int layer = 1; layer <= 8; ++layer) {
      nn::Linear lin(256, 256, {.bias = false}, g);  // PyTorch default: U(-1/16, 1/16)
      if (which == "N(0, 1)") init::normal_(lin.weight, 0.0, 1.0, g);
      if (which == "kaiming_normal_ (ReLU)")
        init::kaiming_normal_(lin.weight, 0.0, init::FanMode::kFanIn, init::Nonlinearity::kReLU, g);
      h = tg::relu(lin(h));
      if (layer == 1 || layer == 2 || layer == 4 || layer == 8) fmt::print(" {:8.3g}", rms(h));
    }
    fmt::print("\n");
  }
}
