// file: examples/course/loop_diagnostics.cpp
// Chapter 15: the three diagnostics of the training loop. check_all_have_grad names a layer
// that forward forgot to call; then, with the bug fixed, the global gradient norm and the
// per-parameter update/weight ratio (UpdateTracker) over 200 steps of Adam.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"

namespace nn = tg::nn;

const nn::LinearOptions kF64{.dtype = tg::kFloat64};  // float64: the figures are exact

/// 2 -> 16 -> 16 -> 2 with ReLUs; `skip_hidden` reproduces a classic bug: the hidden layer is
/// registered (so it has parameters and the optimizer holds them) but forward never calls it.
class Net : public nn::UnaryModule {
 public:
  Net(bool skip_hidden, tg::Generator& gen)
      : UnaryModule("Net"),
        embed(2, 16, kF64, gen),
        hidden(16, 16, kF64, gen),
        head(16, 2, kF64, gen),
        skip_hidden_(skip_hidden) {
    register_module("embed", embed);
    register_module("hidden", hidden);
    register_module("head", head);
  }
  tg::Tensor forward(const tg::Tensor& x) override {
    tg::Tensor h = tg::relu(embed(x));
    if (!skip_hidden_) h = tg::relu(hidden(h));
    return head(h);
  }
  nn::Linear embed, hidden, head;

 private:
  bool skip_hidden_;
};

int main() {
  // Points in [-1, 1]^2, class 1 where x0 * x1 > 0 (the four quadrants, XOR-like).
  tg::Generator data_gen(5);
  const tg::Tensor x = tg::sub(tg::mul(tg::rand({256, 2}, tg::kFloat64, data_gen), 2.0), 1.0);
  const std::vector<double> xy = x.to_vector<double>();
  std::vector<int64_t> labels;
  for (size_t i = 0; i < xy.size(); i += 2) labels.push_back(xy[i] * xy[i + 1] > 0 ? 1 : 0);
  const tg::Tensor y = tg::tensor(labels, {256});

  {
    tg::Generator gen(0);
    Net buggy(/*skip_hidden=*/true, gen);
    tg::cross_entropy(buggy(x), y).backward();
    try {
      nn::check_all_have_grad(buggy.named_parameters());
    } catch (const tg::MisuseError& e) {
      fmt::print("{}\n\n", e.what());
    }
  }

  tg::Generator gen(0);
  Net model(/*skip_hidden=*/false, gen);
  nn::Adam opt(model.parameters(), {.lr = 0.01});
  nn::UpdateTracker tracker(model.named_parameters());
  std::map<std::string, std::vector<double>> ratios;  // name -> ratio at each reported step
  const std::vector<int> report = {1, 2, 10, 50, 200};
  fmt::print("{:>14}", "step");
  for (int s : report) fmt::print(" {:>9}", s);
  std::vector<double> losses, norms;
  for (int step = 1; step <= report.back(); ++step) {
    const tg::Tensor loss = tg::cross_entropy(model(x), y);
    opt.zero_grad();
    loss.backward();
    if (step == 1) nn::check_all_have_grad(model.named_parameters());  // passes now
    const double norm = nn::global_grad_norm(model.parameters());
    tracker.snapshot();
    opt.step();
    if (std::find(report.begin(), report.end(), step) == report.end()) continue;
    losses.push_back(loss.item<double>());
    norms.push_back(norm);
    for (const nn::UpdateRatio& r : tracker.ratios()) ratios[r.name].push_back(r.ratio);
  }
  fmt::print("\n{:>14}", "loss");
  for (double l : losses) fmt::print(" {:>9.4f}", l);
  fmt::print("\n{:>14}", "grad norm");
  for (double n : norms) fmt::print(" {:>9.4f}", n);
  fmt::print("\nupdate/weight:\n");
  for (const auto& [name, _] : model.named_parameters()) {
    fmt::print("{:>14}", name);
    for (double r : ratios[name]) fmt::print(" {:>9.2e}", r);
    fmt::print("\n");
  }
}
