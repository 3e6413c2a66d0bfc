// file: examples/course/tokenizer_gradients.cpp
// Chapter 24: what the gradient sees of tokens. A bigram model (an embedding table and an
// output head, float64) takes one step on a sequence in which some ids are common, one is
// rare, one is only ever a target and one never occurs: which rows of the two tables each id
// reaches. Then one text under three tokenizers, scored by a unigram count model: its loss
// per token, which depends on the tokenizer, and per character, which compares.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

namespace nn = tg::nn;

/// The Euclidean norm of row r of a (rows, cols) float64 tensor.
double row_norm(const tg::Tensor& t, int64_t r) {
  double s = 0;
  for (const double v : t.select(0, r).to_vector<double>()) s += v * v;
  return std::sqrt(s);
}

/// A unigram model fitted to `ids` and scored on them: the entropy of their frequencies, in
/// nats per token.
double unigram_nats(const std::vector<int64_t>& ids) {
  std::map<int64_t, int64_t> count;
  for (const int64_t id : ids) ++count[id];
  double nats = 0;
  const auto n = static_cast<double>(ids.size());
  for (const auto& [id, c] : count)
    nats -= static_cast<double>(c) / n * std::log(static_cast<double>(c) / n);
  return nats;
}

constexpr std::string_view kPoems =
    "春眠不觉晓，处处闻啼鸟。\n夜来风雨声，花落知多少。\n\n"
    "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n\n"
    "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n\n"
    "红豆生南国，春来发几枝。\n愿君多采撷，此物最相思。\n\n"
    "千山鸟飞绝，万径人踪灭。\n孤舟蓑笠翁，独钓寒江雪。\n";

}  // namespace

int main() {
  // 1. logits = embedding(x) W^T, then the cross-entropy of the next id: one step's gradients.
  const int64_t V = 6, C = 4;
  const std::vector<int64_t> seq = {0, 1, 0, 1, 0, 2, 0, 1, 0, 1, 3, 1, 0, 1, 0, 2, 0, 1, 4};
  const auto N = static_cast<int64_t>(seq.size()) - 1;
  const tg::Tensor x = tg::tensor(std::vector<int64_t>(seq.begin(), seq.end() - 1));
  const tg::Tensor y = tg::tensor(std::vector<int64_t>(seq.begin() + 1, seq.end()));
  tg::Generator gen(24);
  const tg::Tensor E = (tg::randn({V, C}, tg::kFloat64, gen) * 0.5).requires_grad_();
  const tg::Tensor W = (tg::randn({V, C}, tg::kFloat64, gen) * 0.5).requires_grad_();
  const tg::Tensor logits = tg::linear(tg::embedding(x, E), W);
  const tg::Tensor loss = tg::cross_entropy(logits, y);
  const std::vector<tg::Tensor> g = tg::grad({loss}, {E, W, logits});
  const std::vector<double> dlogits = g[2].to_vector<double>();
  fmt::print("{} positions, V {}, C {}: loss {:.4f} nats (a uniform guess: ln {} = {:.4f})\n", N, V,
             C, loss.item<double>(), V, std::log(static_cast<double>(V)));
  fmt::print("{:>3} {:>6} {:>7} {:>11} {:>11} {:>17}\n", "id", "input", "target", "|dE row|",
             "|dW row|", "sum of dlogit");
  for (int64_t v = 0; v < V; ++v) {
    int64_t as_input = 0, as_target = 0;
    double column = 0;
    for (int64_t n = 0; n < N; ++n) {
      as_input += seq[static_cast<size_t>(n)] == v;
      as_target += seq[static_cast<size_t>(n) + 1] == v;
      column += dlogits[static_cast<size_t>(n * V + v)];
    }
    fmt::print("{:>3} {:>6} {:>7} {:>11.6f} {:>11.6f} {:>+17.6f}\n", v, as_input, as_target,
               row_norm(g[0], v), row_norm(g[1], v), column);
  }

  // 2. One text, three tokenizers, one unigram model each.
  const auto chars = static_cast<double>(nn::utf8::count_chars(kPoems));
  const nn::BpeTokenizer bytes({}, {});
  const nn::CharTokenizer characters(kPoems);
  const nn::BpeTokenizer bpe = nn::BpeTokenizer::train(kPoems, {.vocab_size = 320, .special = {}});
  fmt::print("five poems, {} characters; a unigram model fitted to each tokenization:\n",
             nn::utf8::count_chars(kPoems));
  fmt::print("{:<10} {:>5} {:>6} {:>11} {:>11} {:>10} {:>14}\n", "tokenizer", "ids", "tokens",
             "tokens/char", "nats/token", "bits/char", "uniform b/char");
  const std::pair<const char*, const nn::Tokenizer*> all[] = {
      {"bytes", &bytes}, {"characters", &characters}, {"bpe 320", &bpe}};
  for (const auto& [name, tok] : all) {
    const std::vector<int64_t> ids = tok->encode(kPoems);
    const double per_char = static_cast<double>(ids.size()) / chars;
    const double nats = unigram_nats(ids);
    const double uniform = std::log(static_cast<double>(tok->vocab_size()));
    fmt::print("{:<10} {:>5} {:>6} {:>11.3f} {:>11.3f} {:>10.3f} {:>14.3f}\n", name,
               tok->vocab_size(), ids.size(), per_char, nats, nats * per_char / std::numbers::ln2,
               uniform * per_char / std::numbers::ln2);
  }
}
