// file: examples/course/recompute_tape.cpp
// Chapter 23: activation checkpointing on the tape. A small function recorded plainly and
// through nn::recompute: what each tape saves, how often the function runs, the gradients. A
// dropout inside it, whose mask the backward must draw again from the same place. Then a
// TransformerLM whose blocks recompute: one node per block on the tape, and the loss and every
// gradient the plain model's, bit for bit, with and without RoPE.
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

namespace nn = tg::nn;

/// Whether two tensors hold the same numbers, bit for bit (as float64, which holds any
/// float32 exactly).
bool same_bits(const tg::Tensor& a, const tg::Tensor& b) {
  return a.to(tg::kFloat64).to_vector<double>() == b.to(tg::kFloat64).to_vector<double>();
}

/// The tape that leads to `root`, one op a line with what it saved for the backward.
void list_tape(const std::string& title, const tg::Tensor& root) {
  fmt::print("{}\n", title);
  size_t total = 0;
  for (const tg::TapeEntry& e : tg::tape_entries(root)) {
    fmt::print("  {:<10} saves {:>4} bytes\n", e.op, e.saved_bytes);
    total += e.saved_bytes;
  }
  fmt::print("  {:<16} {:>4} bytes\n", "in all", total);
}

/// One training step of a small TransformerLM (seed 1, B 3, T 8): the tape summed by op
/// (calls, saved bytes), then the loss and every parameter's gradient after the backward.
struct Step {
  std::map<std::string, std::pair<int, size_t>> by_op;
  std::vector<tg::Tensor> results;
};

Step one_step(const nn::TransformerConfig& config, bool recompute) {
  tg::Generator gen(1);
  nn::TransformerLM model(config, gen);
  model.set_recompute_blocks(recompute);
  const tg::Tensor ids = tg::randint(0, config.vocab_size, {3, 9}, tg::kInt64, gen);
  const tg::Tensor logits = model(ids.narrow(1, 0, 8)).reshape({24, config.vocab_size});
  const tg::Tensor loss = tg::cross_entropy(logits, ids.narrow(1, 1, 8).reshape({24}));
  Step step;
  for (const tg::TapeEntry& e : tg::tape_entries(loss)) {
    step.by_op[e.op].first += 1;
    step.by_op[e.op].second += e.saved_bytes;
  }
  loss.backward();
  step.results.push_back(loss.detach());
  for (const tg::Tensor& p : model.parameters()) step.results.push_back(p.grad());
  return step;
}

bool all_same_bits(const Step& a, const Step& b) {
  bool same = a.results.size() == b.results.size();
  for (size_t i = 0; same && i < a.results.size(); ++i) {
    same = same_bits(a.results[i], b.results[i]);
  }
  return same;
}

}  // namespace

int main() {
  // 1. One function, recorded two ways.
  tg::Generator gen(23);
  const tg::Tensor x = tg::randn({4, 8}, tg::kFloat32, gen).requires_grad_();
  const tg::Tensor w = tg::randn({8, 8}, tg::kFloat32, gen).requires_grad_();
  int runs = 0;
  auto fn = [&](const std::vector<tg::Tensor>& in) {
    ++runs;
    return tg::sum(tg::tanh(tg::matmul(in[0], w)));
  };
  const tg::Tensor plain = fn({x});
  list_tape("fn(x) = sum(tanh(x w)), x (4, 8) and w (8, 8) float32, the plain tape:", plain);
  runs = 0;
  const tg::Tensor checkpointed = nn::recompute(fn, {x}, {w});
  list_tape("the same through nn::recompute(fn, {x}, {w}):", checkpointed);
  fmt::print("runs of fn: {} in the forward, ", runs);
  const std::vector<tg::Tensor> by_plain = tg::grad({plain}, {x, w});
  const std::vector<tg::Tensor> by_recompute = tg::grad({checkpointed}, {x, w});
  fmt::print("{} after the backward\n", runs);
  fmt::print("value, dx and dw against the plain ones, bit for bit: {} {} {}\n",
             same_bits(checkpointed, plain), same_bits(by_recompute[0], by_plain[0]),
             same_bits(by_recompute[1], by_plain[1]));
  {
    tg::NoGradGuard no_grad;
    runs = 0;
    const tg::Tensor untaped = nn::recompute(fn, {x}, {w});
    fmt::print("under NoGradGuard: a node on the tape: {}, runs of fn: {}\n",
               untaped.grad_fn() != nullptr, runs);
  }

  // 2. A dropout inside fn draws its mask from the default generator: the backward's second
  // run must start where the first one did.
  auto noisy = [&](const std::vector<tg::Tensor>& in) {
    return tg::dropout(tg::matmul(in[0], w), 0.5, true);
  };
  tg::Generator& global = tg::default_generator();
  global.manual_seed(7);
  const tg::Tensor noisy_plain = noisy({x});
  const std::vector<tg::Tensor> noisy_by_plain =
      tg::grad({noisy_plain}, {x, w}, {tg::ones({4, 8})});
  global.manual_seed(7);
  const tg::Tensor noisy_checkpointed = nn::recompute(noisy, {x}, {w});
  const uint64_t after_forward = global.offset();
  // What a run from where the generator is now would keep (then back to that place).
  int64_t differ = 0;
  {
    tg::NoGradGuard no_grad;
    const std::vector<float> later = noisy({x}).to_vector<float>();
    const std::vector<float> first = noisy_checkpointed.to_vector<float>();
    for (size_t i = 0; i < first.size(); ++i) differ += (later[i] == 0) != (first[i] == 0);
    global.set_offset(after_forward);
  }
  const std::vector<tg::Tensor> noisy_by_recompute =
      tg::grad({noisy_checkpointed}, {x, w}, {tg::ones({4, 8})});
  fmt::print("a dropout (p = 0.5) inside fn, the default generator seeded 7:\n");
  fmt::print("  its offset: 0 before the forward, {} after it, {} after the backward\n",
             after_forward, global.offset());
  fmt::print("  a run from offset {} would drop other elements: {} of 32 differ\n", after_forward,
             differ);
  fmt::print("  the backward's run from offset 0: dx and dw the plain ones, bit for bit: {} {}\n",
             same_bits(noisy_by_recompute[0], noisy_by_plain[0]),
             same_bits(noisy_by_recompute[1], noisy_by_plain[1]));

  // 3. A TransformerLM of 2 blocks, plainly and with every block recomputed.
  nn::TransformerConfig config{.vocab_size = 13,
                               .context_length = 8,
                               .d_model = 16,
                               .n_layers = 2,
                               .n_heads = 4,
                               .d_ff = 24};
  const Step plain_step = one_step(config, false);
  const Step recompute_step = one_step(config, true);
  fmt::print("one step of a 2-block TransformerLM (B 3, T 8, C 16), its tape by op:\n");
  fmt::print("  {:<29} {:>14} {:>14}\n", "", "plain", "recompute");
  fmt::print("  {:<29} {:>5} {:>8} {:>5} {:>8}\n", "op", "calls", "bytes", "calls", "bytes");
  std::map<std::string, int> names;
  for (const auto& [op, r] : plain_step.by_op) names[op] = 0;
  for (const auto& [op, r] : recompute_step.by_op) names[op] = 0;
  std::pair<int, size_t> plain_total{0, 0}, recompute_total{0, 0};
  for (const auto& [op, unused] : names) {
    const auto none = std::pair<int, size_t>{0, 0};
    const auto p = plain_step.by_op.contains(op) ? plain_step.by_op.at(op) : none;
    const auto r = recompute_step.by_op.contains(op) ? recompute_step.by_op.at(op) : none;
    fmt::print("  {:<29} {:>5} {:>8} {:>5} {:>8}\n", op, p.first, p.second, r.first, r.second);
    plain_total = {plain_total.first + p.first, plain_total.second + p.second};
    recompute_total = {recompute_total.first + r.first, recompute_total.second + r.second};
  }
  fmt::print("  {:<29} {:>5} {:>8} {:>5} {:>8}\n", "in all", plain_total.first, plain_total.second,
             recompute_total.first, recompute_total.second);
  fmt::print("the loss and all {} gradients, plain against recompute, bit for bit:\n",
             plain_step.results.size() - 1);
  fmt::print("  without RoPE: {}\n", all_same_bits(plain_step, recompute_step));
  config.rope = true;
  fmt::print("  with RoPE:    {}\n",
             all_same_bits(one_step(config, false), one_step(config, true)));
}
