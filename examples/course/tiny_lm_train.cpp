// file: examples/course/tiny_lm_train.cpp
// Chapter 17: the tiny LM end to end, in miniature: a character tokenizer, a small
// TransformerLM, AdamW with a cosine schedule and clipping, 60 steps on three short
// sentences, the validation loss next to the bigram-count baseline, and a greedy sample.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"

namespace {

namespace nn = tg::nn;

// Both losses are scored on the same targets: non-overlapping windows of `context` ids,
// predicting ids[i + 1] at every position i of each window, as examples/tiny_lm.cpp does.

/// Mean -log P(b | a) under add-alpha smoothed bigram counts of `train`.
double bigram_loss(const std::vector<int64_t>& train, const std::vector<int64_t>& ids,
                   int64_t vocab, int64_t context, double alpha) {
  const auto V = static_cast<size_t>(vocab);
  std::vector<double> pair(V * V, 0.0), first(V, 0.0);
  for (size_t i = 0; i + 1 < train.size(); ++i) {
    pair[static_cast<size_t>(train[i]) * V + static_cast<size_t>(train[i + 1])] += 1;
    first[static_cast<size_t>(train[i])] += 1;
  }
  double total = 0;
  size_t count = 0;
  for (size_t start = 0; start + static_cast<size_t>(context) < ids.size(); start += context) {
    for (size_t i = start; i < start + static_cast<size_t>(context); ++i, ++count) {
      const auto a = static_cast<size_t>(ids[i]), b = static_cast<size_t>(ids[i + 1]);
      total -= std::log((pair[a * V + b] + alpha) / (first[a] + alpha * static_cast<double>(V)));
    }
  }
  return total / static_cast<double>(count);
}

/// The model's mean cross-entropy on the same targets (nats per character).
double model_loss(nn::TransformerLM& model, const std::vector<int64_t>& ids, int64_t context) {
  tg::NoGradGuard no_grad;
  std::vector<int64_t> x, y;
  int64_t rows = 0;
  for (size_t start = 0; start + static_cast<size_t>(context) < ids.size(); start += context) {
    x.insert(x.end(), ids.begin() + start, ids.begin() + start + context);
    y.insert(y.end(), ids.begin() + start + 1, ids.begin() + start + context + 1);
    ++rows;
  }
  return tg::cross_entropy(model(tg::tensor(x, {rows, context})), tg::tensor(y, {rows, context}))
      .item<float>();
}

}  // namespace

int main() {
  std::string text;
  for (int i = 0; i < 12; ++i) text += "the cat sat on the mat.\nthe dog ate the log.\n";
  const nn::TextDataset data(text);  // the last 10% of the characters are the validation split
  const nn::Tokenizer& tok = data.tokenizer();
  fmt::print("{} characters, vocabulary {}: {}\n", text.size(), tok.vocab_size(), tok.to_json());
  fmt::print("encode(\"the cat\") = {}\n", tok.encode("the cat"));
  fmt::print("train {} ids, val {} ids\n", data.split("train").numel(), data.split("val").numel());

  const nn::TransformerConfig config{.vocab_size = tok.vocab_size(),
                                     .context_length = 24,
                                     .d_model = 32,
                                     .n_layers = 2,
                                     .n_heads = 4,
                                     .d_ff = 64,
                                     .rope = true};
  tg::Generator init_gen(0), data_gen(1);
  nn::TransformerLM model(config, init_gen);
  nn::AdamW opt(model.parameters(), {.lr = 1e-2, .weight_decay = 0.01});
  const nn::CosineWithWarmup schedule{
      .base_lr = 1e-2, .warmup_steps = 10, .total_steps = 60, .min_lr = 1e-3};
  fmt::print("model: {} parameters\n", model.num_parameters());

  const std::vector<tg::Tensor> params = model.parameters();
  for (int64_t step = 0; step < 60; ++step) {
    schedule.apply(opt, step);
    const nn::Batch b = data.get_batch("train", 8, 24, data_gen);
    const tg::Tensor loss = tg::cross_entropy(model(b.x), b.y);
    opt.zero_grad();
    loss.backward();
    const double grad_norm = nn::clip_grad_norm(params, 1.0);
    opt.step();
    if (step % 10 == 0 || step == 59) {
      fmt::print("step {:>2}  lr {:.5f}  loss {:.4f}  grad norm {:.3f}\n", step, opt.lr(),
                 loss.item<float>(), grad_norm);
    }
  }

  const std::vector<int64_t> train = data.split("train").to_vector<int64_t>();
  const std::vector<int64_t> val = data.split("val").to_vector<int64_t>();
  model.eval();
  fmt::print("val loss {:.4f} nats/char  (uniform guess: log {} = {:.4f})\n",
             model_loss(model, val, 24), tok.vocab_size(),
             std::log(static_cast<double>(tok.vocab_size())));
  for (double alpha : {1.0, 0.1, 0.01}) {
    fmt::print("bigram, alpha {:<4}: {:.4f}\n", alpha,
               bigram_loss(train, val, tok.vocab_size(), 24, alpha));
  }

  // Greedy decoding: always append the most likely next character.
  std::vector<int64_t> ids = tok.encode("the ");
  tg::NoGradGuard no_grad;
  for (int n = 0; n < 40; ++n) {
    const auto t = std::min<int64_t>(static_cast<int64_t>(ids.size()), config.context_length);
    const std::vector<int64_t> window(ids.end() - t, ids.end());
    const std::vector<float> logits = model(tg::tensor(window, {t}))[t - 1].to_vector<float>();
    ids.push_back(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  std::string sample;  // with each newline shown as "\n"
  for (char c : tok.decode(ids)) sample += c == '\n' ? std::string("\\n") : std::string(1, c);
  fmt::print("greedy: {}\n", sample);
}
