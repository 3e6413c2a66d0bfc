// file: examples/course/accounting_step.cpp
// Chapter 18: what one training step of the tiny LM costs. The formulas (estimate_step)
// against the tape of a real step (measure_step), the tape op by op, the memory of the
// whole step with AdamW, and how the costs grow with the context length T.
#include <fmt/format.h>

#include <map>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

int main() {
  // The tiny LM of examples/tiny_lm.cpp with its defaults, on a 80-character vocabulary.
  const tg::nn::TransformerConfig config{.vocab_size = 80,
                                         .context_length = 128,
                                         .d_model = 64,
                                         .n_layers = 3,
                                         .n_heads = 4,
                                         .d_ff = 192,
                                         .rope = true};
  const int64_t B = 32, T = 32, V = config.vocab_size;
  tg::Generator gen(18);
  tg::nn::TransformerLM model(config, gen);
  const tg::Tensor ids = tg::randint(0, V, {B, T}, tg::kInt64, gen);
  const tg::Tensor targets = tg::randint(0, V, {B * T}, tg::kInt64, gen);
  const tg::Tensor loss = tg::cross_entropy(model(ids).reshape({B * T, V}), targets);

  const tg::nn::StepCost paper = tg::nn::estimate_step(config, B, T);
  const tg::nn::StepCost tape = tg::nn::measure_step(loss);
  fmt::print("B = {}, T = {}: {} tokens\n", B, T, B * T);
  fmt::print("             forward FLOPs   saved bytes\n");
  fmt::print("on paper  {:>15} {:>13}\n", paper.forward_flops, paper.saved_bytes);
  fmt::print("on tape   {:>15} {:>13}\n\n", tape.forward_flops, tape.saved_bytes);

  // The tape op by op, summed by op name: which ops hold the memory, which do the work.
  struct Row {
    int64_t calls = 0, flops = 0, bytes = 0;
  };
  std::map<std::string, Row> by_op;
  for (const tg::TapeEntry& e : tg::tape_entries(loss)) {
    Row& r = by_op[e.op];
    r.calls += 1;
    r.flops += tg::nn::forward_flops(e);
    r.bytes += static_cast<int64_t>(e.saved_bytes);
  }
  fmt::print("{:<29} {:>5} {:>12} {:>11}\n", "op", "calls", "FLOPs", "saved bytes");
  for (const auto& [op, r] : by_op) {
    fmt::print("{:<29} {:>5} {:>12} {:>11}\n", op, r.calls, r.flops, r.bytes);
  }

  // A step with AdamW holds the weights, their gradients, two moments per weight, and
  // what the tape saved (the weights inside it are the same tensors, counted once here).
  const int64_t P = model.num_parameters(), weights = 4 * P;
  int64_t weights_on_tape = 0;
  for (const tg::TapeEntry& e : tg::tape_entries(loss)) {
    if (e.op == "linear" || e.op == "rms_norm" || e.op == "add_rms_norm") {
      const tg::Shape& w = e.inputs[e.op == "add_rms_norm" ? 2 : 1].shape;
      int64_t n = 1;
      for (int64_t s : w) n *= s;
      weights_on_tape += 4 * n;
    }
  }
  const int64_t activations = tape.saved_bytes - weights_on_tape;
  fmt::print("\nparameters {} ({} bytes in float32)\n", P, weights);
  fmt::print("weights {:>9}  gradients {:>9}  AdamW moments {:>9}  activations {:>9}\n", weights,
             weights, 2 * weights, activations);
  fmt::print("6 N rule: 6 x {} parameters x {} tokens = {} FLOPs a step; counted here: {}\n\n", P,
             B * T, 6 * P * B * T, 3 * paper.forward_flops);

  // Doubling T: the linear layers' work and every activation double, attention's scores
  // (T x T per head) quadruple.
  fmt::print("{:>4} {:>15} {:>13}\n", "T", "forward FLOPs", "saved bytes");
  for (const int64_t t : {32, 64, 128}) {
    const tg::nn::StepCost c = tg::nn::estimate_step(config, B, t);
    fmt::print("{:>4} {:>15} {:>13}\n", t, c.forward_flops, c.saved_bytes);
  }
  return 0;
}
