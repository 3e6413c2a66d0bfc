// tests/nn/optim_test.cpp — SGD, Adam and AdamW: hand-computed steps, state, errors, and
// 10 steps against PyTorch 1.13 within 1e-6 (tests/reference/fixtures/optim.safetensors).
#include "nn/optim.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "test_util.h"

namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using tg::Tensor;
using tg::testing::as_doubles;

Tensor param(std::initializer_list<double> values) { return tg::tensor(values).requires_grad_(); }

// Sets p.grad to `values` (float64) and runs one step.
void step_with(tg::nn::Optimizer& opt, Tensor p, std::initializer_list<double> values) {
  p.set_grad(tg::tensor(values));
  opt.step();
}

// ------------------------------------------------------------------- SGD, by hand
TEST(SGDTest, PlainStepIsLrTimesGrad) {
  Tensor p = param({1.0, 2.0});
  tg::nn::SGD opt({p}, {.lr = 0.1});
  step_with(opt, p, {0.5, -1.0});
  EXPECT_THAT(as_doubles(p), Pointwise(DoubleNear(1e-15), {0.95, 2.1}));
  EXPECT_EQ(opt.step_count(), 1);
  EXPECT_TRUE(opt.state_tensors().empty());  // no momentum, no state
}

TEST(SGDTest, MomentumAccumulatesVelocity) {
  // buf = 1, p = 1 - 0.1; then buf = 0.9 * 1 + 1 = 1.9, p = 0.9 - 0.19
  Tensor p = param({1.0});
  tg::nn::SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
  step_with(opt, p, {1.0});
  EXPECT_NEAR(p.item<double>(), 0.9, 1e-15);
  step_with(opt, p, {1.0});
  EXPECT_NEAR(p.item<double>(), 0.71, 1e-15);
  ASSERT_EQ(opt.state_tensors().size(), 1u);
  EXPECT_EQ(opt.state_tensors()[0].first, "state.0.momentum_buffer");
  EXPECT_NEAR(opt.state_tensors()[0].second.item<double>(), 1.9, 1e-15);
}

TEST(SGDTest, NesterovLooksAhead) {
  // step 1: buf = 1, d = 1 + 0.9 * 1 = 1.9; step 2: buf = 1.9, d = 1 + 0.9 * 1.9 = 2.71
  Tensor p = param({1.0});
  tg::nn::SGD opt({p}, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
  step_with(opt, p, {1.0});
  EXPECT_NEAR(p.item<double>(), 0.81, 1e-15);
  step_with(opt, p, {1.0});
  EXPECT_NEAR(p.item<double>(), 0.539, 1e-15);
}

TEST(SGDTest, DampeningSkipsTheFirstStep) {
  // PyTorch's first buffer is the gradient itself; later ones add (1 - dampening) * g.
  Tensor p = param({1.0});
  tg::nn::SGD opt({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.5});
  step_with(opt, p, {1.0});
  EXPECT_NEAR(p.item<double>(), 0.9, 1e-15);
  step_with(opt, p, {1.0});  // buf = 0.9 + 0.5 = 1.4
  EXPECT_NEAR(p.item<double>(), 0.76, 1e-15);
}

TEST(SGDTest, WeightDecayAddsL2Gradient) {
  Tensor p = param({2.0});
  tg::nn::SGD opt({p}, {.lr = 0.5, .weight_decay = 0.1});
  step_with(opt, p, {0.0});  // d = 0 + 0.1 * 2
  EXPECT_NEAR(p.item<double>(), 1.9, 1e-15);
}

TEST(SGDTest, LrCanBeChangedBetweenSteps) {
  Tensor p = param({1.0});
  tg::nn::SGD opt({p}, {.lr = 0.1});
  opt.set_lr(0.25);
  EXPECT_EQ(opt.lr(), 0.25);
  step_with(opt, p, {1.0});
  EXPECT_NEAR(p.item<double>(), 0.75, 1e-15);
}

// ------------------------------------------------------------------- Adam, AdamW, by hand
TEST(AdamTest, FirstStepsMoveByLrTimesSign) {
  // With bias correction m_hat = g and v_hat = g^2 after any number of equal gradients, so
  // each step moves by lr * g / (|g| + eps).
  Tensor p = param({1.0, -1.0});
  tg::nn::Adam opt({p}, {.lr = 0.1});
  step_with(opt, p, {2.0, -0.5});
  EXPECT_THAT(as_doubles(p), Pointwise(DoubleNear(1e-8), {0.9, -0.9}));
  step_with(opt, p, {2.0, -0.5});
  EXPECT_THAT(as_doubles(p), Pointwise(DoubleNear(1e-8), {0.8, -0.8}));
}

TEST(AdamTest, L2WeightDecayGoesThroughTheAdaptiveStep) {
  // g = 0 + 0.5 * 4 = 2: the normalised step is lr, whatever the decay's size.
  Tensor p = param({4.0});
  tg::nn::Adam opt({p}, {.lr = 0.1, .weight_decay = 0.5});
  step_with(opt, p, {0.0});
  EXPECT_NEAR(p.item<double>(), 3.9, 1e-8);
}

TEST(AdamWTest, DecoupledWeightDecayShrinksTheWeight) {
  // m = v = 0, so only p * (1 - lr * weight_decay) = 4 * 0.95 remains.
  Tensor p = param({4.0});
  tg::nn::AdamW opt({p}, {.lr = 0.1, .weight_decay = 0.5});
  step_with(opt, p, {0.0});
  EXPECT_NEAR(p.item<double>(), 3.8, 1e-15);
}

TEST(AdamWTest, StateHasPyTorchNamesShapesAndStep) {
  Tensor w = tg::zeros({2, 3}, tg::kFloat32).requires_grad_();
  Tensor b = tg::zeros({3}, tg::kFloat32).requires_grad_();
  tg::nn::AdamW opt({w, b});
  w.set_grad(tg::ones({2, 3}));
  b.set_grad(tg::ones({3}));
  opt.step();
  opt.step();
  std::vector<std::string> names;
  for (const auto& [name, t] : opt.state_tensors()) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("state.0.exp_avg", "state.0.exp_avg_sq", "state.0.step",
                                 "state.1.exp_avg", "state.1.exp_avg_sq", "state.1.step"));
  const auto state = opt.state_tensors();
  EXPECT_EQ(state[0].second.shape(), tg::Shape({2, 3}));
  EXPECT_EQ(state[0].second.dtype(), tg::kFloat32);
  EXPECT_EQ(state[2].second.shape(), tg::Shape{});
  EXPECT_EQ(state[2].second.item<float>(), 2.0f);
  // exp_avg after two gradients of 1: 0.1 + 0.9 * 0.1 = 0.19
  EXPECT_NEAR(state[0].second.at<float>({0, 0}), 0.19f, 1e-7);
}

TEST(AdamTest, ParametersWithoutGradAreSkippedWithTheirStepCount) {
  Tensor a = param({1.0});
  Tensor b = param({1.0});
  tg::nn::Adam opt({a, b}, {.lr = 0.1});
  step_with(opt, a, {1.0});
  step_with(opt, a, {1.0});
  EXPECT_EQ(b.item<double>(), 1.0);
  EXPECT_EQ(opt.state_tensors().size(), 3u);  // only a's state exists
  // b's first step is its own step 1: bias correction makes it exactly lr * sign.
  b.set_grad(tg::tensor({-3.0}));
  opt.step();
  EXPECT_NEAR(b.item<double>(), 1.1, 1e-8);
  EXPECT_EQ(opt.state_tensors().back().first, "state.1.step");
  EXPECT_EQ(opt.state_tensors().back().second.item<float>(), 1.0f);
  EXPECT_EQ(opt.step_count(), 3);
}

// ------------------------------------------------------------------- layouts, versions, dtypes
TEST(OptimizerTest, NonContiguousParameterIsUpdatedThroughItsView) {
  tg::Generator gen(7);
  const Tensor values = tg::randn({3, 4}, tg::kFloat64, gen);
  Tensor strided = values.clone().t().requires_grad_();  // (4, 3), non-contiguous leaf
  Tensor dense = values.t().contiguous().requires_grad_();
  ASSERT_FALSE(strided.is_contiguous());
  tg::nn::AdamW a({strided}, {.lr = 0.1});
  tg::nn::AdamW b({dense}, {.lr = 0.1});
  for (int k = 0; k < 3; ++k) {
    const Tensor g = tg::randn({4, 3}, tg::kFloat64, gen);
    strided.set_grad(g.clone());
    dense.set_grad(g.clone());
    a.step();
    b.step();
  }
  EXPECT_EQ(as_doubles(strided), as_doubles(dense));
  EXPECT_NE(as_doubles(strided), as_doubles(values.t()));
}

TEST(OptimizerTest, StepInvalidatesTensorsSavedForBackward) {
  Tensor p = param({1.0, 2.0});
  const Tensor y = tg::sum(tg::mul(p, p));  // mul saves p
  tg::nn::SGD opt({p}, {.lr = 0.1});
  step_with(opt, p, {1.0, 1.0});
  EXPECT_TG_THROW(y.backward(), MisuseError, "mul", "version");
}

TEST(OptimizerTest, HalfParametersAreUpdatedInFloat) {
  for (tg::DType dtype : {tg::kFloat16, tg::kBFloat16}) {
    Tensor p = tg::tensor({1.0, -2.0}).to(dtype).requires_grad_();
    tg::nn::SGD opt({p}, {.lr = 0.5, .momentum = 0.5});
    p.set_grad(tg::tensor({0.5, 1.0}).to(dtype));
    opt.step();
    opt.step();  // buf = 0.75, 1.5
    EXPECT_THAT(as_doubles(p), ElementsAre(0.375, -3.25)) << dtype;
    EXPECT_EQ(opt.state_tensors()[0].second.dtype(), dtype);
  }
}

TEST(OptimizerTest, ABFloat16WeightLosesUpdatesBelowHalfAnUlpWhichMasterWeightsKeep) {
  // The reason mixed precision keeps float32 master weights: near 1, bfloat16's spacing is
  // 2^-7 = 0.0078, so a step of lr * grad = 0.001 is below half of it and rounds away, every
  // time. The same hundred steps on a float32 copy move it by 0.1, which bfloat16 can hold.
  Tensor low = tg::tensor({1.0}).to(tg::kBFloat16).requires_grad_();
  Tensor master = tg::tensor({1.f}).requires_grad_();
  tg::nn::SGD opt_low({low}, {.lr = 1e-3}), opt_master({master}, {.lr = 1e-3});
  for (int i = 0; i < 100; ++i) {
    low.set_grad(tg::tensor({1.0}).to(tg::kBFloat16));
    master.set_grad(tg::tensor({1.f}));
    opt_low.step();
    opt_master.step();
  }
  EXPECT_EQ(as_doubles(low)[0], 1.0);  // stale: not one of the hundred steps landed
  EXPECT_NEAR(as_doubles(master)[0], 0.9, 1e-5);
  EXPECT_EQ(as_doubles(master.to(tg::kBFloat16))[0], 0.8984375);  // 0.9 to the nearest bf16
}

TEST(OptimizerTest, ZeroGradClearsOrZeroes) {
  Tensor p = param({1.0, 2.0});
  tg::nn::SGD opt({p});
  p.set_grad(tg::tensor({3.0, 4.0}));
  opt.zero_grad(false);
  EXPECT_THAT(as_doubles(p.grad()), ElementsAre(0.0, 0.0));
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  opt.step();  // nothing to do without grads
  EXPECT_THAT(as_doubles(p), ElementsAre(1.0, 2.0));
}

TEST(OptimizerTest, MinimisesAQuadraticThroughTheTape) {
  Tensor p = tg::zeros({3}, tg::kFloat64).requires_grad_();
  const Tensor target = tg::tensor({1.0, -2.0, 3.0});
  tg::nn::Adam opt({p}, {.lr = 0.1});
  for (int k = 0; k < 300; ++k) {
    const Tensor loss = tg::sum(tg::pow(tg::sub(p, target), 2.0));
    loss.backward();
    opt.step();
    opt.zero_grad();
  }
  EXPECT_THAT(as_doubles(p), Pointwise(DoubleNear(1e-2), {1.0, -2.0, 3.0}));
}

// ------------------------------------------------------------------- checkpoint state
TEST(OptimizerStateTest, LoadingStateResumesBitIdentically) {
  tg::Generator gen(3);
  const Tensor start = tg::randn({2, 3}, tg::kFloat32, gen);
  std::vector<Tensor> grads;
  for (int k = 0; k < 6; ++k) grads.push_back(tg::randn({2, 3}, tg::kFloat32, gen));

  Tensor straight = start.clone().requires_grad_();
  tg::nn::AdamW a({straight}, {.lr = 0.05});
  for (int k = 0; k < 6; ++k) {
    straight.set_grad(grads[k]);
    a.step();
  }

  Tensor first = start.clone().requires_grad_();
  tg::nn::AdamW b({first}, {.lr = 0.05});
  for (int k = 0; k < 3; ++k) {
    first.set_grad(grads[k]);
    b.step();
  }
  std::vector<std::pair<std::string, Tensor>> saved;
  for (const auto& [name, t] : b.state_tensors()) saved.emplace_back(name, t.clone());
  Tensor resumed = first.detach().clone().requires_grad_();
  tg::nn::AdamW c({resumed}, {.lr = 0.05});
  c.load_state_tensors(saved, b.step_count());
  EXPECT_EQ(c.step_count(), 3);
  for (int k = 3; k < 6; ++k) {
    resumed.set_grad(grads[k]);
    c.step();
  }
  EXPECT_EQ(tg::testing::as_doubles(resumed), tg::testing::as_doubles(straight));
}

TEST(OptimizerStateTest, LoadListsEveryProblemAndChangesNothing) {
  Tensor w = tg::zeros({2, 3}).requires_grad_();
  tg::nn::Adam opt({w});
  w.set_grad(tg::ones({2, 3}));
  opt.step();
  const std::vector<std::pair<std::string, Tensor>> bad = {
      {"state.0.exp_avg", tg::zeros({3, 2})},
      {"state.0.exp_avg_sq", tg::zeros({2, 3}, tg::kFloat64)},
      {"state.0.momentum_buffer", tg::zeros({2, 3})},
      {"state.4.exp_avg", tg::zeros({2, 3})},
      {"param_groups.lr", tg::zeros({1})},
  };
  EXPECT_TG_THROW(opt.load_state_tensors(bad, -1), ValueError, "Adam.load_state_tensors",
                  "6 problem(s)", "step count -1", "'state.0.exp_avg' has shape (3, 2)",
                  "expected shape (2, 3) and dtype float32", "dtype float64",
                  "no state named 'momentum_buffer'", "no parameter 4 (there are 1)",
                  "'param_groups.lr' is not of the form");
  EXPECT_EQ(opt.step_count(), 1);
  EXPECT_EQ(opt.state_tensors().size(), 3u);
  EXPECT_EQ(opt.state_tensors()[2].second.item<float>(), 1.0f);

  EXPECT_TG_THROW(opt.load_state_tensors({{"state.0.exp_avg", tg::zeros({2, 3})}}, 1), ValueError,
                  "2 problem(s)", "parameter 0 has part of its state but no 'state.0.exp_avg_sq'",
                  "no 'state.0.step'");
  const std::vector<std::pair<std::string, Tensor>> twice = {
      {"state.0.step", tg::scalar_tensor(1.0)}, {"state.0.step", tg::scalar_tensor(2.0)}};
  EXPECT_TG_THROW(opt.load_state_tensors(twice, 1), ValueError, "'state.0.step' appears twice");
}

TEST(OptimizerStateTest, EmptyStateIsValid) {
  Tensor w = param({1.0});
  tg::nn::SGD opt({w}, {.lr = 0.1, .momentum = 0.9});
  step_with(opt, w, {1.0});
  opt.load_state_tensors({}, 0);
  EXPECT_TRUE(opt.state_tensors().empty());
  step_with(opt, w, {1.0});  // the buffer starts again from the gradient
  EXPECT_NEAR(opt.state_tensors()[0].second.item<double>(), 1.0, 0.0);
}

// ------------------------------------------------------------------- errors
TEST(OptimizerErrorTest, ParametersAreChecked) {
  using tg::nn::SGD;
  EXPECT_TG_THROW(SGD({}), ValueError, "SGD", "empty parameter list");
  EXPECT_TG_THROW(SGD({tg::zeros({2, 3})}), MisuseError, "SGD", "parameter 0", "(2, 3)",
                  "does not require grad");
  Tensor leaf = param({1.0});
  EXPECT_TG_THROW(SGD({leaf, tg::mul(leaf, 2.0)}), MisuseError, "SGD", "parameter 1", "not a leaf");
  EXPECT_TG_THROW(SGD({leaf, leaf}), ValueError, "SGD", "parameters 0 and 1", "the same tensor");
  EXPECT_TG_THROW(SGD({leaf, Tensor()}), MisuseError, "SGD", "parameter 1", "undefined");
  EXPECT_TG_THROW(SGD({tg::zeros({2}, tg::kInt64)}), DTypeError, "SGD", "parameter 0", "int64");
}

TEST(OptimizerErrorTest, OptionsAreChecked) {
  Tensor p = param({1.0});
  using tg::nn::Adam;
  using tg::nn::AdamW;
  using tg::nn::SGD;
  EXPECT_TG_THROW(SGD({p}, {.lr = -0.1}), ValueError, "SGD", "learning rate", "-0.1");
  EXPECT_TG_THROW(SGD({p}, {.momentum = -0.5}), ValueError, "SGD", "momentum", "-0.5");
  EXPECT_TG_THROW(SGD({p}, {.weight_decay = -1}), ValueError, "SGD", "weight_decay", "-1");
  EXPECT_TG_THROW(SGD({p}, {.nesterov = true}), ValueError, "SGD", "nesterov", "momentum 0");
  EXPECT_TG_THROW(SGD({p}, {.momentum = 0.9, .dampening = 0.1, .nesterov = true}), ValueError,
                  "SGD", "nesterov", "dampening 0.1");
  EXPECT_TG_THROW(Adam({p}, {.lr = -1}), ValueError, "Adam", "learning rate", "-1");
  EXPECT_TG_THROW(Adam({p}, {.betas = {1.0, 0.999}}), ValueError, "Adam", "betas[0]", "1");
  EXPECT_TG_THROW(Adam({p}, {.betas = {0.9, -0.1}}), ValueError, "Adam", "betas[1]", "-0.1");
  EXPECT_TG_THROW(Adam({p}, {.eps = -1e-8}), ValueError, "Adam", "eps", "-1e-08");
  EXPECT_TG_THROW(Adam({p}, {.weight_decay = -0.1}), ValueError, "Adam", "weight_decay");
  EXPECT_TG_THROW(AdamW({p}, {.betas = {0.9, 1.5}}), ValueError, "AdamW", "betas[1]", "1.5");
  EXPECT_TG_THROW(AdamW({p}, {.weight_decay = -0.01}), ValueError, "AdamW", "weight_decay",
                  "-0.01");
  SGD opt({p});
  EXPECT_TG_THROW(opt.set_lr(-2), ValueError, "SGD", "learning rate", "-2");
  EXPECT_TG_THROW(opt.set_lr(NAN), ValueError, "SGD", "learning rate", "nan");
}

// ------------------------------------------------------------------- against PyTorch
// Replays each "<case>" of optim.safetensors (see tests/reference/generate.py, family optim)
// and requires every output, parameter and state, within 1e-6 of PyTorch's.
template <class Opt, class Options>
std::vector<Tensor> run_steps(const Tensor& start, const Tensor& grads, const Options& options) {
  Tensor p = start.clone().requires_grad_();
  Opt opt({p}, options);
  for (int64_t k = 0; k < grads.size(0); ++k) {
    p.set_grad(grads.select(0, k).clone());
    opt.step();
  }
  std::vector<Tensor> out = {p.detach()};
  for (const auto& [name, t] : opt.state_tensors()) {
    if (!name.ends_with(".step")) out.push_back(t);
  }
  return out;
}

TEST(OptimizerReferenceTest, TenStepsMatchPyTorchWithin1e6) {
  const tg::safetensors::Contents c =
      tg::safetensors::load(TAPEGRAD_FIXTURES_DIR "/optim.safetensors");
  auto num = [&](const std::string& key) { return std::stod(c.metadata.at(key)); };
  int cases = 0;
  double worst = 0.0;
  for (const auto& [key, op] : c.metadata) {
    if (!key.ends_with(".op") || !op.ends_with("_steps")) continue;
    const std::string name = key.substr(0, key.size() - 3);
    auto get = [&](const std::string& k) { return num(name + "." + k); };
    const Tensor& start = c.tensors.at(name + ".in0");
    const Tensor& grads = c.tensors.at(name + ".in1");
    ASSERT_EQ(grads.size(0), 10) << name;
    std::vector<Tensor> outs;
    if (op == "sgd_steps") {
      outs = run_steps<tg::nn::SGD>(
          start, grads,
          tg::nn::SGDOptions{.lr = get("lr"),
                             .momentum = get("momentum"),
                             .dampening = get("dampening"),
                             .weight_decay = get("weight_decay"),
                             .nesterov = c.metadata.at(name + ".nesterov") == "true"});
    } else if (op == "adam_steps") {
      outs = run_steps<tg::nn::Adam>(start, grads,
                                     tg::nn::AdamOptions{.lr = get("lr"),
                                                         .betas = {get("beta1"), get("beta2")},
                                                         .eps = get("eps"),
                                                         .weight_decay = get("weight_decay")});
    } else {
      ASSERT_EQ(op, "adamw_steps") << name;
      outs = run_steps<tg::nn::AdamW>(start, grads,
                                      tg::nn::AdamWOptions{.lr = get("lr"),
                                                           .betas = {get("beta1"), get("beta2")},
                                                           .eps = get("eps"),
                                                           .weight_decay = get("weight_decay")});
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::string out_name = fmt::format("{}.out{}", name, k);
      ASSERT_TRUE(c.tensors.contains(out_name)) << out_name;
      const Tensor& expected = c.tensors.at(out_name);
      ASSERT_EQ(outs[k].dtype(), expected.dtype()) << out_name;
      const std::vector<double> a = as_doubles(outs[k]);
      const std::vector<double> e = as_doubles(expected);
      ASSERT_EQ(a.size(), e.size()) << out_name;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_LE(std::abs(a[i] - e[i]), 1e-6) << out_name << " element " << i;
        worst = std::max(worst, std::abs(a[i] - e[i]));
      }
    }
    EXPECT_FALSE(c.tensors.contains(fmt::format("{}.out{}", name, outs.size()))) << name;
    ++cases;
  }
  EXPECT_GE(cases, 24);
  RecordProperty("worst_abs_difference", fmt::format("{:.3g}", worst));
}

}  // namespace
