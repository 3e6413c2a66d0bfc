// file: examples/profile_step.cpp
#include <fmt/format.h>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

// Where the time of a training step goes: ten steps of a small Transformer under a
// tg::Profiler, then one line per op and phase, the most time first.
int main() {
  tg::Generator gen(0);
  tg::nn::TransformerLM model(
      {.vocab_size = 64, .context_length = 32, .d_model = 64, .n_layers = 2, .n_heads = 4}, gen);
  tg::nn::AdamW adamw(model.parameters(), {.lr = 3e-4});
  const tg::Tensor tokens = tg::randint(0, 64, {8, 33}, tg::kInt64, gen);
  const tg::Tensor x = tokens.narrow(1, 0, 32), y = tokens.narrow(1, 1, 32);

  tg::Profiler profiler;  // records every op from here until stop()
  for (int step = 0; step < 10; ++step) {
    tg::Tensor loss = tg::cross_entropy(model(x), y);
    adamw.zero_grad();
    loss.backward();
    adamw.step();
  }
  profiler.stop();
  for (const tg::OpTime& t : profiler.results()) {
    fmt::print("{:<30} {:<9} {:>5} calls {:>9.3f} ms\n", t.op, t.phase, t.calls, t.seconds * 1e3);
  }
}
