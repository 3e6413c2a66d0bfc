// examples/moons.cpp — the smallest real classifier: an MLP separates two interleaving
// half-moons, and you can see the boundary it learned.
//
//   moons [--steps N] [--lr LR] [--samples N] [--noise SD] [--hidden 16 16] [--seed S]
//         [--out DIR] [--json]
//
// The data is made here, with tapegrad's Generator: half the points lie on the upper half of
// the unit circle (class 0), the other half on a lower half-circle shifted right and down
// (class 1), so the two arcs hook into each other and no straight line separates them. Each
// point then gets Gaussian noise of standard deviation --noise.
//
// An MLP 2 -> 16 -> ReLU -> 16 -> ReLU -> 2 maps a point to two logits, and Adam minimises
// their cross-entropy over the whole data set at every step (full-batch training: with a few
// hundred points there is no need for mini-batches). Every 100 steps it measures the
// accuracy on the training points and on a fresh test set drawn the same way. The run ends
// at 100% training accuracy with the default settings.
// In DIR it leaves metrics.csv, loss.svg and decision_boundary.svg: the model's P(class 1)
// over the plane (blue = class 0, white = undecided, red = class 1) with the points on top.
// Ctrl-C stops early and still writes everything.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <numbers>

#include <fmt/ranges.h>

#include "core/core.h"
#include "examples/common/cli.h"
#include "examples/common/interrupt.h"
#include "examples/common/plot.h"
#include "examples/common/run_log.h"
#include "examples/common/train_step.h"
#include "nn/nn.h"

namespace {

using tg::Tensor;
namespace nn = tg::nn;

struct Args {
  int64_t steps = 500;
  double lr = 0.01;
  int64_t samples = 200;
  double noise = 0.1;
  std::vector<int64_t> hidden = {16, 16};
  uint64_t seed = 0;
  std::string out = "runs/moons";
  bool json = false;
};

/// `n` points (x, y) as an (n, 2) float32 tensor and their labels as an (n) int64 tensor.
struct Moons {
  Tensor points, labels;
};

/// Two half-moons of n/2 points each (the first gets the odd one), like scikit-learn's
/// make_moons: class 0 at (cos t, sin t), class 1 at (1 - cos t, 0.5 - sin t), for t evenly
/// spaced over [0, pi], plus N(0, noise^2) on every coordinate.
Moons make_moons(int64_t n, double noise, tg::Generator& gen) {
  std::vector<float> xy;
  std::vector<int64_t> labels;
  const int64_t n0 = (n + 1) / 2, n1 = n / 2;
  for (int64_t label = 0; label < 2; ++label) {
    const int64_t count = label == 0 ? n0 : n1;
    for (int64_t i = 0; i < count; ++i) {
      const double t = count > 1 ? std::numbers::pi * double(i) / double(count - 1) : 0.0;
      const auto [e1, e2] = gen.normal_pair();
      const double x = label == 0 ? std::cos(t) : 1 - std::cos(t);
      const double y = label == 0 ? std::sin(t) : 0.5 - std::sin(t);
      xy.push_back(static_cast<float>(x + noise * e1));
      xy.push_back(static_cast<float>(y + noise * e2));
      labels.push_back(label);
    }
  }
  return {tg::tensor(xy, {n, 2}), tg::tensor(labels, {n})};
}

/// The fraction of points whose larger logit is at their label.
double accuracy(nn::MLP& model, const Moons& data) {
  tg::NoGradGuard no_grad;
  const std::vector<float> logits = model(data.points).to_vector<float>();  // (n, 2)
  const std::vector<int64_t> labels = data.labels.to_vector<int64_t>();
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    correct += (logits[2 * i + 1] > logits[2 * i] ? 1 : 0) == labels[i] ? 1 : 0;
  }
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

/// What one training step reports: the loss before the update and the gradients' global norm.
/// P(class 1) = softmax(logits)[1] at the centres of a 120 x 120 grid around the data.
tg::examples::ProbabilityGrid probability_grid(nn::MLP& model, const Moons& data) {
  const std::vector<float> xy = data.points.to_vector<float>();
  tg::examples::ProbabilityGrid g{.x_min = INFINITY,
                                  .x_max = -INFINITY,
                                  .y_min = INFINITY,
                                  .y_max = -INFINITY,
                                  .nx = 120,
                                  .ny = 120,
                                  .p = {}};
  for (size_t i = 0; i < xy.size(); i += 2) {
    g.x_min = std::min<double>(g.x_min, xy[i]), g.x_max = std::max<double>(g.x_max, xy[i]);
    g.y_min = std::min<double>(g.y_min, xy[i + 1]), g.y_max = std::max<double>(g.y_max, xy[i + 1]);
  }
  g.x_min -= 0.5, g.x_max += 0.5, g.y_min -= 0.5, g.y_max += 0.5;
  std::vector<float> centres;
  for (int64_t j = 0; j < g.ny; ++j) {
    for (int64_t i = 0; i < g.nx; ++i) {
      centres.push_back(
          static_cast<float>(g.x_min + (double(i) + 0.5) / double(g.nx) * (g.x_max - g.x_min)));
      centres.push_back(
          static_cast<float>(g.y_min + (double(j) + 0.5) / double(g.ny) * (g.y_max - g.y_min)));
    }
  }
  tg::NoGradGuard no_grad;
  const Tensor probs = tg::softmax(model(tg::tensor(centres, {g.nx * g.ny, 2})), -1);
  const std::vector<float> p = probs.to_vector<float>();  // (nx * ny, 2)
  for (size_t k = 0; k < p.size(); k += 2) g.p.push_back(std::clamp<double>(p[k + 1], 0, 1));
  return g;
}

int run(const Args& a) {
  tg::examples::prepare_out_dir("moons", "--out", a.out);
  tg::Generator data_gen(a.seed), init_gen(a.seed + 1);
  const Moons train = make_moons(a.samples, a.noise, data_gen);
  const Moons test = make_moons(a.samples, a.noise, data_gen);  // the next draws: new points

  std::vector<int64_t> sizes = {2};
  sizes.insert(sizes.end(), a.hidden.begin(), a.hidden.end());
  sizes.push_back(2);
  double weights = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i)
    weights += static_cast<double>(sizes[i]) * static_cast<double>(sizes[i + 1]);
  TG_CHECK(weights <= static_cast<double>(int64_t{1} << 26), ValueError,
           "moons: --hidden {} makes {:.3g} weights; the limit is 2^26 (a toy problem needs "
           "a few hundred)",
           fmt::join(a.hidden, " "), weights);
  nn::MLP model(sizes, {}, init_gen);
  nn::Adam opt(model.parameters(), {.lr = a.lr});

  tg::examples::RunLog log({.out_dir = a.out,
                            .total_steps = a.steps,
                            .json = a.json,
                            .log_every = 100,
                            .unit = "pts",
                            .eval_columns = {"train_accuracy", "test_accuracy"}});
  log.note(fmt::format("moons: {} training points (noise {}), model {} with {} parameters",
                       a.samples, a.noise, fmt::join(sizes, "-"), model.num_parameters()));

  tg::examples::install_stop_handler();
  const std::vector<Tensor> params = model.parameters();
  double train_acc = NAN, test_acc = NAN, last_loss = NAN;
  int64_t step = 0;
  while (step < a.steps) {
    const tg::examples::StepResult r =
        tg::examples::train_step(model, opt, train.points, train.labels, params);
    ++step;
    last_loss = r.loss;
    log.step(step, last_loss, opt.lr(), r.grad_norm, a.samples);
    const bool stopped = tg::examples::stop_requested();
    if (step % 100 == 0 || step == a.steps || stopped) {
      train_acc = accuracy(model, train), test_acc = accuracy(model, test);
      log.eval(step, {train_acc, test_acc});
    }
    if (stopped) {
      log.note(fmt::format("moons: stopped at step {} (Ctrl-C)", step));
      break;
    }
  }

  const std::string picture = a.out + "/decision_boundary.svg";
  const std::vector<float> xy = train.points.to_vector<float>();
  tg::examples::LabeledPoints points;
  points.label = train.labels.to_vector<int64_t>();
  for (size_t i = 0; i < xy.size(); i += 2)
    points.x.push_back(xy[i]), points.y.push_back(xy[i + 1]);
  tg::examples::write_decision_boundary(
      picture,
      fmt::format("moons: P(class 1) after {} steps, train accuracy {:.3f}", step, train_acc),
      probability_grid(model, train), points);
  log.finish({{"steps", step},
              {"train_loss", last_loss},
              {"train_accuracy", train_acc},
              {"test_accuracy", test_acc},
              {"decision_boundary", picture}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"moons: train an MLP to separate two interleaving half-moons"};
  tg::examples::one_line_errors(app, "moons");
  namespace ex = tg::examples;
  Args a;
  app.add_option("--steps", a.steps, "full-batch Adam steps")
      ->check(ex::whole_number(1))
      ->capture_default_str();
  app.add_option("--lr", a.lr, "Adam learning rate")
      ->check(ex::positive_real())
      ->capture_default_str();
  app.add_option("--samples", a.samples, "training points (and as many test points)")
      ->check(ex::whole_number(2, 10'000'000))
      ->capture_default_str();
  app.add_option("--noise", a.noise, "standard deviation of the noise on each coordinate")
      ->check(ex::non_negative_real())
      ->capture_default_str();
  app.add_option("--hidden", a.hidden, "widths of the hidden layers, e.g. --hidden 16 16")
      ->check(ex::whole_number(1, 65536))
      ->capture_default_str();
  app.add_option("--seed", a.seed, "seed of the data and the init")
      ->check(ex::whole_number(0))
      ->capture_default_str();
  app.add_option("--out", a.out, "directory for metrics.csv, loss.svg, decision_boundary.svg")
      ->capture_default_str();
  app.add_flag("--json", a.json, "print JSON lines instead of a progress bar");
  if (const auto status = tg::examples::parse_command_line(app, argc, argv)) return *status;
  return tg::examples::run_program("moons", [&] { return run(a); });
}
