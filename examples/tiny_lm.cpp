// examples/tiny_lm.cpp — a small Transformer language model, trained from scratch.
//
//   tiny_lm train  [--data words|tang|FILE] [--tokenizer char|bpe] [--out DIR] [--steps N]
//                  [--max-seconds S] [--json] ...
//   tiny_lm sample [--checkpoint FILE] [--temperature T] [--top-k K] [--top-p P] [--seed S]
//                  [--no-cache] ...
//
// `train` reads a text: `words` (the default: Debian's word list /usr/share/dict/words, one
// word per line, so the model learns to invent English-looking words), `tang` (the 300 Tang
// poems of Debian's fortunes-zh, cleaned by nn/corpus.h: it learns to write Chinese verse),
// or any UTF-8 file. It tokenizes it, by characters (--tokenizer char, the default) or by a
// byte-level BPE learned from the training split (--tokenizer bpe, nn/bpe.h), and trains a
// pre-norm decoder-only Transformer (nn/transformer.h) with AdamW, a cosine schedule with
// linear warmup and gradient clipping. Every --eval-every steps it measures the validation
// loss, next to the losses of a unigram and a bigram count model on the same tokens (the
// baselines a Transformer must beat clearly), and saves a checkpoint. Ctrl-C saves a
// checkpoint and exits cleanly; --resume continues a run bit-identically. At the end it gives
// the validation loss in bits per character too (comparable across tokenizers) and, for
// `tang`, the share of regular verse lines in a sample of the model against a unigram sample.
// In DIR it leaves: checkpoint.safetensors, metrics.csv and loss.svg.
//
// Data-parallel: `mpirun -np P build/bin/tiny_lm train ...` trains on P processes
// (nn/distributed/ddp.h). Every rank draws the same batch of --batch sequences and takes its
// --batch / P of them; the gradients are averaged, so the run takes the steps a single process
// would (up to float rounding). Rank 0 alone evaluates, logs and writes the checkpoint, which
// any number of processes can resume.
//
// `sample` loads the checkpoint (the model config and tokenizer travel inside it) and
// generates text one token at a time: logits of the last position / temperature, keep
// the top-k and then the top-p nucleus, softmax, draw. It runs the model against a KV cache
// (one new position per token) unless --no-cache, and prints its speed to stderr.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>

#include "core/core.h"
#include "examples/common/cli.h"
#include "examples/common/interrupt.h"
#include "examples/common/mixed_step.h"
#include "examples/common/run_log.h"
#include "examples/common/sample.h"
#include "examples/common/train_step.h"
#include "nn/distributed/ddp.h"
#include "nn/nn.h"

namespace {

using tg::Tensor;
namespace nn = tg::nn;

struct TrainArgs {
  std::string data = "words";      // words, tang, or a file
  bool titles = false;             // tang: keep each poem's title and author lines
  std::string tokenizer = "char";  // char, or bpe
  int64_t vocab_size = 1000;       // bpe: ids, bytes and specials included
  int64_t min_count = 1;           // char: rarer characters go to the byte fallback
  std::string out = "runs/tiny_lm";
  bool shuffle_lines = true;
  int64_t steps = 450;
  double max_seconds = 0;  // 0: no limit
  int64_t stop_after = 0;  // 0: no limit
  int64_t batch = 32;
  int64_t context = 32;
  int64_t d_model = 64;
  int64_t layers = 3;
  int64_t heads = 4;
  int64_t kv_heads = 0;    // grouped-query attention: 0 = as many as heads
  bool recompute = false;  // activation checkpointing of every block (nn/recompute.h)
  int64_t d_ff = 192;
  bool rope = true;
  double lr = 3e-3;
  double min_lr = 3e-4;
  int64_t warmup = 50;
  double weight_decay = 0.01;
  double clip = 1.0;
  int64_t eval_every = 100;
  int64_t eval_tokens = 16384;
  uint64_t seed = 0;
  bool json = false;
  bool resume = false;
  std::string dtype = "f32";       // f32, or bf16/f16: mixed precision (autocast, master weights)
  int64_t bucket_kb = 128;         // data-parallel: gradient bytes per all-reduce, in KiB
  bool overlap = true;             // data-parallel: all-reduce buckets during backward
  double init_scale = 65536;       // f16: the loss scale to start from (nn::GradScaler)
  std::vector<std::string> given;  // the flags on the command line (some apply to one choice)
};

struct SampleArgs {
  std::string checkpoint = "runs/tiny_lm/checkpoint.safetensors";
  std::string prompt;
  int64_t length = 300;
  double temperature = 0.8;
  int64_t top_k = 0;   // 0: all
  double top_p = 1.0;  // 1: no nucleus cut
  uint64_t seed = 0;
  bool cache = true;  // generate against a KV cache (nn/transformer.h)
};

// ---------------------------------------------------------------- data
constexpr const char* kWordsPath = "/usr/share/dict/words";

std::string read_text(const std::string& path) {
  return tg::examples::read_input_file(
      "tiny_lm", "--data", path,
      "The default data is Debian's word list: apt-get install wamerican (or pass --data FILE "
      "with any UTF-8 text)");
}

/// `units` in a seeded random order: Fisher-Yates, with tapegrad's generator.
void shuffle(std::vector<std::string>& units, uint64_t seed) {
  tg::Generator gen(seed);
  for (size_t i = units.size(); i > 1; --i) {
    std::swap(units[i - 1], units[static_cast<size_t>(gen.integer(0, static_cast<int64_t>(i)))]);
  }
}

/// The text to learn, as --data names it, with --shuffle-lines its units in a seeded random
/// order: the lines of a file (a word list is sorted, so without this the validation split,
/// the last 10%, would be the words from "t" to "z" only), or the Tang poems.
std::string load_corpus(const TrainArgs& a) {
  std::vector<std::string> units;
  if (a.data == "tang") {
    units = nn::read_fortunes(nn::kTangPoemsPath, {.keep_titles = a.titles});
  } else {
    const std::string text = read_text(a.data == "words" ? std::string(kWordsPath) : a.data);
    if (!a.shuffle_lines) return text;
    std::stringstream s(text);
    for (std::string line; std::getline(s, line);) units.push_back(line);
  }
  if (a.shuffle_lines) shuffle(units, a.seed);
  std::string out;  // each unit and a newline: a poem ends in one, so poems get a blank line
  for (const std::string& unit : units) out += unit + "\n";
  return out;
}

/// The tokenizer --tokenizer asks for. BPE learns its merges from the part of the text that
/// becomes the training split (the first 1 - 10%), so validation text stays unseen.
std::unique_ptr<nn::Tokenizer> make_tokenizer(const TrainArgs& a, const std::string& text) {
  if (a.tokenizer == "bpe") {
    const std::string_view train_part(text.data(), text.size() - text.size() / 10);
    return std::make_unique<nn::BpeTokenizer>(
        nn::BpeTokenizer::train(train_part, {.vocab_size = a.vocab_size}));
  }
  return std::make_unique<nn::CharTokenizer>(
      text, nn::CharTokenizerOptions{.byte_fallback = a.min_count > 1, .min_count = a.min_count});
}

/// The first `n` ids of `split` (fewer if it is shorter).
std::vector<int64_t> head_ids(const Tensor& split, int64_t n) {
  const int64_t count = std::min(n, split.numel());
  return split.narrow(0, 0, count).to_vector<int64_t>();
}

// ---------------------------------------------------------------- the losses
/// Mean cross-entropy (nats per token) of predicting ids[i + 1] from ids[0..i], over
/// non-overlapping windows of `context` tokens.
double model_loss(nn::TransformerLM& model, const std::vector<int64_t>& ids, int64_t context,
                  std::optional<tg::DType> dtype = std::nullopt) {
  tg::NoGradGuard no_grad;
  std::optional<tg::AutocastGuard> autocast;  // evaluated in the precision it trains in
  if (dtype) autocast.emplace(*dtype);
  model.eval();
  double total = 0;
  int64_t count = 0;
  const int64_t n = static_cast<int64_t>(ids.size());
  const int64_t rows_per_batch = 64;
  for (int64_t start = 0; start + 1 < n;) {
    std::vector<int64_t> x, y;
    int64_t rows = 0;
    for (; rows < rows_per_batch && start + context < n; ++rows, start += context) {
      x.insert(x.end(), ids.begin() + start, ids.begin() + start + context);
      y.insert(y.end(), ids.begin() + start + 1, ids.begin() + start + context + 1);
    }
    if (rows == 0) break;
    const Tensor logits = model(tg::tensor(x, {rows, context}));
    const Tensor loss =
        tg::cross_entropy(logits, tg::tensor(y, {rows, context}), {.reduction = "sum"});
    total += static_cast<double>(loss.item<float>());
    count += rows * context;
  }
  model.train();
  return count > 0 ? total / static_cast<double>(count) : NAN;
}

/// The targets model_loss scores: ids[start + 1 .. start + context] of each whole window.
template <typename F>
void for_each_target(const std::vector<int64_t>& ids, int64_t context, F&& f) {
  const auto n = static_cast<int64_t>(ids.size());
  for (int64_t start = 0; start + context < n; start += context) {
    for (int64_t i = start; i < start + context; ++i) {
      f(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(i + 1)]);
    }
  }
}

/// The same loss for count models trained on the training split. Unigram: P(b) =
/// (count(b) + alpha) / (N + alpha * V). Bigram: P(b | a) = (count(a, b) + alpha) /
/// (count(a) + alpha * V). The best alpha of a few is kept, so each baseline is as strong
/// as its kind gets. Pairs are counted in a hash map: V^2 would be 16M entries at V = 4000.
struct Baselines {
  double unigram;
  double bigram;
};
Baselines baseline_losses(const Tensor& train, const std::vector<int64_t>& ids, int64_t vocab,
                          int64_t context) {
  const std::vector<int64_t> t = train.to_vector<int64_t>();
  std::unordered_map<int64_t, double> pair;
  std::vector<double> single(static_cast<size_t>(vocab), 0.0),
      first(static_cast<size_t>(vocab), 0.0);
  for (size_t i = 0; i < t.size(); ++i) {
    single[static_cast<size_t>(t[i])] += 1;
    if (i + 1 < t.size()) {
      pair[t[i] * vocab + t[i + 1]] += 1;
      first[static_cast<size_t>(t[i])] += 1;
    }
  }
  const auto v = static_cast<double>(vocab);
  Baselines best{INFINITY, INFINITY};
  for (double alpha : {1.0, 0.1, 0.01, 0.001}) {
    double uni = 0, bi = 0;
    int64_t count = 0;
    for_each_target(ids, context, [&](int64_t a, int64_t b) {
      const auto found = pair.find(a * vocab + b);
      const double ab = found == pair.end() ? 0.0 : found->second;
      uni -= std::log((single[static_cast<size_t>(b)] + alpha) /
                      (static_cast<double>(t.size()) + alpha * v));
      bi -= std::log((ab + alpha) / (first[static_cast<size_t>(a)] + alpha * v));
      ++count;
    });
    best.unigram = std::min(best.unigram, uni / static_cast<double>(count));
    best.bigram = std::min(best.bigram, bi / static_cast<double>(count));
  }
  return best;
}

/// Characters per token over the targets the losses score: a loss in nats per token times
/// tokens per character, over ln 2, is bits per character, whatever the tokenizer.
double tokens_per_char(const nn::Tokenizer& tok, const std::vector<int64_t>& ids, int64_t context) {
  std::vector<int64_t> targets;
  for_each_target(ids, context, [&](int64_t, int64_t b) { targets.push_back(b); });
  return static_cast<double>(targets.size()) /
         static_cast<double>(std::max<int64_t>(nn::utf8::count_chars(tok.decode(targets)), 1));
}

// ---------------------------------------------------------------- generation
struct GenerateOptions {
  int64_t length = 300;
  double temperature = 0.8;
  int64_t top_k = 0;
  double top_p = 1.0;
  bool cache = true;
};

/// Appends `o.length` tokens to `ids` (which holds at least one), drawn from the model one at
/// a time; `emit` gets each new id as it is drawn.
void generate(nn::TransformerLM& model, std::vector<int64_t>& ids, const GenerateOptions& o,
              tg::Generator& gen, const std::function<void(int64_t)>& emit) {
  tg::NoGradGuard no_grad;
  model.eval();
  const int64_t ctx = model.config.context_length;
  nn::KVCache cache(model.config, 1);
  // The logits of the next token. Without the cache: the model on the last ctx tokens,
  // recomputed every time. With it: the prompt's last ctx tokens once (the prefill), then
  // one new position per token against the cache. When the cache is full it starts again
  // from the last ctx / 2 tokens, so from then on the model sees between ctx / 2 and ctx
  // tokens where the recompute sees ctx: the two agree until then.
  auto next_logits = [&]() -> Tensor {
    if (!o.cache) {
      const std::vector<int64_t> window = tg::examples::context_window(ids, ctx);
      const auto t = static_cast<int64_t>(window.size());
      return model(tg::tensor(window, {t}))[t - 1];
    }
    if (cache.length() == 0 || cache.length() == cache.capacity()) {
      const int64_t keep = cache.length() == 0 ? ctx : std::max<int64_t>(ctx / 2, 1);
      cache.clear();
      const std::vector<int64_t> window = tg::examples::context_window(ids, keep);
      const auto t = static_cast<int64_t>(window.size());
      return model(tg::tensor(window, {t}), cache)[t - 1];
    }
    return model(tg::tensor(std::vector<int64_t>{ids.back()}, {1}), cache)[0];
  };
  for (int64_t n = 0; n < o.length; ++n) {
    const std::vector<double> logits = next_logits().to(tg::kFloat64).to_vector<double>();
    const int64_t k = tg::examples::nucleus_size(logits, o.temperature, o.top_k, o.top_p);
    const auto next =
        static_cast<int64_t>(tg::examples::sample_next(logits, o.temperature, k, gen));
    ids.push_back(next);
    emit(next);
  }
  model.train();
}

/// Verse form, for --data tang: the share of regular lines (nn/corpus.h) in 2000 tokens
/// generated after a blank line, and in as many tokens drawn one by one from the training
/// split's token frequencies (the unigram sample: what a model that learned nothing of
/// order would write).
std::pair<double, double> verse_shares(nn::TransformerLM& model, const nn::Tokenizer& tok,
                                       const Tensor& train, uint64_t seed) {
  constexpr int64_t kTokens = 2000;
  tg::Generator gen(seed);
  std::vector<int64_t> ids = tok.encode("\n");
  const size_t prompt = ids.size();
  generate(model, ids, {.length = kTokens}, gen, [](int64_t) {});
  const std::string text = tok.decode(
      std::vector<int64_t>(ids.begin() + static_cast<std::ptrdiff_t>(prompt), ids.end()));
  const std::vector<int64_t> t = train.to_vector<int64_t>();
  std::vector<int64_t> unigram;
  for (int64_t n = 0; n < kTokens; ++n) {
    unigram.push_back(t[static_cast<size_t>(gen.integer(0, static_cast<int64_t>(t.size())))]);
  }
  return {nn::verse_stats(text).share(), nn::verse_stats(tok.decode(unigram)).share()};
}

// ---------------------------------------------------------------- train
/// What the flags alone can tell, before any file is read.
void check_train_args(const TrainArgs& a) {
  // A flag that only one choice reads would otherwise be silently ignored.
  const auto given = [&](std::string_view flag) { return std::ranges::count(a.given, flag) > 0; };
  TG_CHECK(!given("--vocab-size") || a.tokenizer == "bpe", ValueError,
           "tiny_lm: --vocab-size applies to --tokenizer bpe, not --tokenizer {} (whose "
           "vocabulary is the text's characters)",
           a.tokenizer);
  TG_CHECK(!given("--min-count") || a.tokenizer == "char", ValueError,
           "tiny_lm: --min-count applies to --tokenizer char, not --tokenizer {} (BPE spells "
           "every character in bytes it knows)",
           a.tokenizer);
  TG_CHECK(!a.titles || a.data == "tang", ValueError,
           "tiny_lm: --titles applies to --data tang, not --data '{}'", a.data);
  TG_CHECK(a.eval_tokens > a.context, ValueError,
           "tiny_lm: --eval-tokens {} must be more than --context {}: the validation loss "
           "needs one window of context tokens and the one after them",
           a.eval_tokens, a.context);
  TG_CHECK(a.min_lr <= a.lr, ValueError, "tiny_lm: --min-lr {} is more than --lr {}", a.min_lr,
           a.lr);
  // Attention keeps batch x heads x context^2 probabilities per layer for the backward.
  const double scores = static_cast<double>(a.batch) * static_cast<double>(a.heads) *
                        static_cast<double>(a.context) * static_cast<double>(a.context) *
                        static_cast<double>(a.layers);
  TG_CHECK(scores <= static_cast<double>(int64_t{1} << 28), ValueError,
           "tiny_lm: --batch {} x --heads {} x --context {}^2 x --layers {} = {:.3g} attention "
           "probabilities kept for the backward ({:.3g} GiB of float32); the limit is 2^28",
           a.batch, a.heads, a.context, a.layers, scores, scores * 4 / (1 << 30));
  const int world = tg::distributed::world_size();
  TG_CHECK(a.batch % world == 0, ValueError,
           "tiny_lm: --batch {} does not split evenly over the {} processes of this run (mpirun "
           "-np {}): each takes --batch / {} sequences",
           a.batch, world, world, world);
}

/// The median of `v` (NaN when empty).
double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

int train(const TrainArgs& a) {
  check_train_args(a);
  const std::string text = load_corpus(a);
  const nn::TextDataset data(text, *make_tokenizer(a, text));
  const nn::Tokenizer& tok = data.tokenizer();
  // Both splits need at least one window and the token after it.
  TG_CHECK(data.split("val").numel() > a.context && data.split("train").numel() > a.context,
           ValueError,
           "tiny_lm: --data '{}' has {} tokens: too few for --context {} (the validation "
           "split, the last 10%, has {}, and each split needs more than the context)",
           a.data, data.split("train").numel() + data.split("val").numel(), a.context,
           data.split("val").numel());

  nn::TransformerConfig config{.vocab_size = tok.vocab_size(),
                               .context_length = a.context,
                               .d_model = a.d_model,
                               .n_layers = a.layers,
                               .n_heads = a.heads,
                               .d_ff = a.d_ff,
                               .rope = a.rope,
                               .n_kv_heads = a.kv_heads};
  const std::optional<tg::DType> dtype = tg::examples::autocast_dtype_from_flag("tiny_lm", a.dtype);
  nn::GradScaler scaler = tg::examples::scaler_for(dtype, a.init_scale);  // float16 only
  tg::Generator init_gen(a.seed), data_gen(a.seed + 1);
  nn::TransformerLM model(config, init_gen);
  model.set_recompute_blocks(a.recompute);
  nn::AdamW opt(model.parameters(), {.lr = a.lr, .weight_decay = a.weight_decay});
  const nn::CosineWithWarmup schedule{
      .base_lr = a.lr, .warmup_steps = a.warmup, .total_steps = a.steps, .min_lr = a.min_lr};

  // Data parallelism: rank 0 of `world` processes writes the files, every rank trains.
  const int world = tg::distributed::world_size(), rank = tg::distributed::rank();
  const std::string ckpt = a.out + "/checkpoint.safetensors";
  int64_t step = 0;
  if (a.resume) {
    TG_CHECK(std::filesystem::exists(ckpt), ValueError,
             "tiny_lm: --resume: there is no checkpoint '{}' to resume (run without --resume "
             "first, or pass the --out of that run)",
             ckpt);
    // Checked before anything is loaded: the same data (vocabulary) and the same model.
    const nn::LoadedCheckpoint meta = nn::read_checkpoint_metadata(ckpt);
    for (const char* key : {"config", "tokenizer"}) {
      TG_CHECK(meta.metadata.contains(key), ValueError,
               "tiny_lm: --resume: '{}' has no '{}' metadata, so it was not written by tiny_lm "
               "train",
               ckpt, key);
    }
    TG_CHECK(meta.metadata.at("tokenizer") == tok.to_json(), ValueError,
             "tiny_lm: --resume: '{}' was trained on other data or another tokenizer than "
             "--data '{}' --tokenizer {} (its tokenizers differ)",
             ckpt, a.data, a.tokenizer);
    TG_CHECK(meta.metadata.at("config") == config.to_json(), ValueError,
             "tiny_lm: --resume: '{}' holds the model {}, but the flags describe {}", ckpt,
             meta.metadata.at("config"), config.to_json());
    tg::examples::check_resume_dtype("tiny_lm", ckpt, meta.metadata, a.dtype);
    step = nn::load_checkpoint(ckpt, model, &opt, {{"data", &data_gen}}, dtype ? &scaler : nullptr)
               .step;
  }
  // With several processes: averages the gradients during backward (chapter 25).
  std::optional<tg::distributed::DistributedDataParallel> ddp;
  if (world > 1) {
    ddp.emplace(model, tg::distributed::DdpOptions{.bucket_cap_bytes = a.bucket_kb * 1024,
                                                   .overlap = a.overlap});
  }
  if (rank == 0) {  // rank 0 writes the files
    tg::examples::prepare_out_dir("tiny_lm", "--out", a.out);
    tg::remove_stale_temporaries(ckpt);  // of saves killed in an earlier run
  }
  auto save = [&] {
    if (rank != 0) return;
    nn::save_checkpoint(ckpt, {.model = &model,
                               .optimizer = &opt,
                               .step = step,
                               .generators = {{"data", &data_gen}},
                               .metadata = {{"config", config.to_json()},
                                            {"tokenizer", tok.to_json()},
                                            {"data", a.data},
                                            {"dtype", a.dtype}},
                               .scaler = dtype ? &scaler : nullptr});
  };

  tg::examples::RunLog log({.out_dir = a.out,
                            .total_steps = a.steps,
                            .json = a.json,
                            .log_every = 50,
                            .unit = "tok",
                            .eval_columns = {"val_loss", "bigram_val_loss", "unigram_val_loss"},
                            .resumed_at_step = a.resume ? step : -1,
                            .silent = rank != 0});
  const std::vector<int64_t> val_ids = head_ids(data.split("val"), a.eval_tokens);
  const Baselines base = baseline_losses(data.split("train"), val_ids, tok.vocab_size(), a.context);
  const double bits_per_nat = tokens_per_char(tok, val_ids, a.context) / std::log(2.0);
  log.note(
      fmt::format("tiny_lm: {} tokens of {} ({}: {} ids), model with {} parameters, "
                  "{} steps of {} x {} tokens{}",
                  data.split("train").numel() + data.split("val").numel(), a.data,
                  a.tokenizer == "bpe" ? "byte-level BPE" : "characters", tok.vocab_size(),
                  model.num_parameters(), a.steps, a.batch, a.context,
                  dtype ? fmt::format(", mixed precision {} (float32 master weights{})", a.dtype,
                                      *dtype == tg::kFloat16 ? ", loss scaling" : "")
                        : ""));
  if (ddp) {
    log.note(
        fmt::format("tiny_lm: data-parallel over {} processes, {} sequences each; gradients "
                    "averaged in {} buckets of up to {} KiB{}",
                    world, a.batch / world, ddp->buckets().size(), a.bucket_kb,
                    a.overlap ? ", sent during backward" : ", sent after backward"));
  }

  tg::examples::install_stop_handler();
  const std::vector<Tensor> params = model.parameters();
  double val = NAN, last_loss = NAN;
  bool stopped = false;
  const int64_t first_step = step;
  // Milliseconds of each training step (batch, forward, backward, update) and, data-parallel,
  // of the wait for the last all-reduces at the end of its backward: their medians go into the
  // summary (scripts/bench_ddp.sh reads them).
  std::vector<double> step_ms, wait_ms;
  while (step < a.steps) {
    const auto step_start = std::chrono::steady_clock::now();
    schedule.apply(opt, step);
    // Every rank draws the same batch (their generators have the same seed) and keeps its
    // rows: rank r of P takes sequences [r B/P, (r+1) B/P).
    nn::Batch b = data.get_batch("train", a.batch, a.context, data_gen);
    if (world > 1) {
      const int64_t share = a.batch / world;
      b.x = b.x.narrow(0, rank * share, share);
      b.y = b.y.narrow(0, rank * share, share);
    }
    // The five steps of chapter 15: forward, loss, zero_grad, backward, step (plus clipping);
    // with --dtype bf16/f16 the forward runs under autocast (chapter 20).
    tg::examples::StepResult r =
        tg::examples::mixed_step(model, opt, b.x, b.y, params, a.clip, dtype, scaler);
    if (world > 1) r.loss = tg::distributed::all_reduce(r.loss, tg::distributed::ReduceOp::Average);
    step_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - step_start)
            .count());
    if (ddp) wait_ms.push_back(1000 * ddp->stats().last_wait_seconds);
    // Once, after the first step (its gradients are still there): a parameter the loss does
    // not reach would silently never train; this names every such parameter.
    if (step == first_step) nn::check_all_have_grad(model.named_parameters());
    ++step;
    last_loss = r.loss;
    log.step(step, last_loss, opt.lr(), r.grad_norm, a.batch * a.context);

    const bool out_of_time = (a.max_seconds > 0 && log.elapsed_s() >= a.max_seconds) ||
                             (a.stop_after > 0 && step >= a.stop_after);
    // The ranks stop together: a rank that stopped alone would leave the others waiting.
    stopped = tg::distributed::any(tg::examples::stop_requested() || out_of_time);
    if ((step % a.eval_every == 0 || step == a.steps || stopped) && rank == 0) {
      val = model_loss(model, val_ids, a.context, dtype);
      log.eval(step, {val, base.bigram, base.unigram});
      save();
    }
    if (stopped) {
      log.note(
          fmt::format("tiny_lm: stopped at step {} ({}); checkpoint saved, continue with "
                      "--resume",
                      step, out_of_time ? "--max-seconds or --stop-after reached" : "Ctrl-C"));
      break;
    }
  }
  nlohmann::json verse = nlohmann::json::object();
  if (a.data == "tang" && !tg::examples::stop_requested() &&
      rank == 0) {  // does it write verse? (nn/corpus.h)
    const auto [model_share, unigram_share] =
        verse_shares(model, tok, data.split("train"), a.seed + 2);
    verse = {{"verse_share", model_share}, {"unigram_verse_share", unigram_share}};
  }
  nlohmann::json summary = {{"steps", step},
                            {"train_loss", last_loss},
                            {"val_loss", val},
                            {"bigram_val_loss", base.bigram},
                            {"unigram_val_loss", base.unigram},
                            {"beats_bigram_by", base.bigram - val},
                            {"beats_unigram_by", base.unigram - val},
                            {"val_bits_per_char", val * bits_per_nat},
                            {"bigram_bits_per_char", base.bigram * bits_per_nat},
                            {"checkpoint", ckpt}};
  summary.update(verse);
  summary["step_ms_median"] = median(step_ms);
  if (ddp) {
    summary["processes"] = world;
    summary["ddp_buckets"] = ddp->buckets().size();
    summary["ddp_wait_ms_median"] = median(wait_ms);
  }
  log.finish(summary);
  return 0;
}

// ---------------------------------------------------------------- sample
int sample(const SampleArgs& a) {
  TG_CHECK(a.top_p > 0 && a.top_p <= 1, ValueError,
           "tiny_lm sample: --top-p must be in (0, 1], got {}", a.top_p);
  TG_CHECK(std::filesystem::is_regular_file(a.checkpoint), ValueError,
           "tiny_lm sample: --checkpoint '{}' is not a file (tiny_lm train writes "
           "OUT/checkpoint.safetensors)",
           a.checkpoint);
  const nn::LoadedCheckpoint meta = nn::read_checkpoint_metadata(a.checkpoint);
  TG_CHECK(meta.metadata.contains("config") && meta.metadata.contains("tokenizer"), ValueError,
           "tiny_lm sample: --checkpoint '{}' is not a tiny_lm checkpoint (it has no 'config' "
           "and 'tokenizer' metadata)",
           a.checkpoint);
  // from_json validates the config, sizes included, before the model is built.
  const auto config = nn::TransformerConfig::from_json(meta.metadata.at("config"));
  const std::unique_ptr<nn::Tokenizer> tok = nn::tokenizer_from_json(meta.metadata.at("tokenizer"));
  TG_CHECK(tok->vocab_size() == config.vocab_size, ValueError,
           "tiny_lm sample: --checkpoint '{}' has a tokenizer of {} ids but a model for {}",
           a.checkpoint, tok->vocab_size(), config.vocab_size);
  nn::TransformerLM model(config);
  nn::load_checkpoint(a.checkpoint, model);

  // Start from the prompt, or from a newline (the word and line separator) when there is none.
  std::vector<int64_t> ids = tok->encode(a.prompt.empty() ? std::string("\n") : a.prompt);
  tg::Generator gen(a.seed);
  std::printf("%s", a.prompt.c_str());
  const auto start = std::chrono::steady_clock::now();
  // Each token's bytes go out as it is drawn; a BPE token or a fallback byte may hold part of
  // a character, which the terminal completes with the next one.
  generate(model, ids,
           {.length = a.length,
            .temperature = a.temperature,
            .top_k = a.top_k,
            .top_p = a.top_p,
            .cache = a.cache},
           gen, [&](int64_t next) {
             const std::string bytes = tok->decode(std::vector<int64_t>{next});
             std::fwrite(bytes.data(), 1, bytes.size(), stdout);
           });
  std::printf("\n");
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  // The speed goes to stderr, so that stdout is the text alone.
  std::fprintf(stderr, "tiny_lm sample: %lld tokens in %.3f s (%.0f tokens/s, KV cache %s)\n",
               static_cast<long long>(a.length), took.count(),
               took.count() > 0 ? static_cast<double>(a.length) / took.count() : 0.0,
               a.cache ? "on" : "off");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // MPI's start and end; one process without mpirun (nn/distributed/process_group.h).
  const auto session = tg::examples::start_session("tiny_lm", argc, argv);
  if (!session) return 1;
  CLI::App app{"tiny_lm: train a small Transformer language model, then sample"};
  tg::examples::one_line_errors(app, "tiny_lm");
  app.require_subcommand(1);
  // Every number is checked as it is parsed: a bad one is an error naming its flag.
  namespace ex = tg::examples;
  const CLI::Validator positive = ex::whole_number(1), count = ex::whole_number(0),
                       size = ex::whole_number(1, int64_t{1} << 24);
  const CLI::Validator posreal = ex::positive_real(), nonneg = ex::non_negative_real();
  TrainArgs t;
  CLI::App* tr = app.add_subcommand("train", "train on a UTF-8 text file");
  tr->add_option("--data", t.data,
                 "words (Debian's word list), tang (the 300 Tang poems of fortunes-zh), or a "
                 "UTF-8 text file")
      ->capture_default_str();
  tr->add_flag("--titles", t.titles, "tang: keep each poem's title and author lines");
  tr->add_option("--tokenizer", t.tokenizer,
                 "char (one id per character) or bpe (byte-level BPE learned from the training "
                 "split)")
      ->check(CLI::IsMember({"char", "bpe"}))
      ->capture_default_str();
  tr->add_option("--vocab-size", t.vocab_size,
                 "bpe: ids in all (256 bytes + merges + <|endoftext|>)")
      ->check(ex::whole_number(257, int64_t{1} << 20))
      ->capture_default_str();
  tr->add_option("--min-count", t.min_count,
                 "char: characters seen fewer times are spelled as their UTF-8 bytes")
      ->check(positive)
      ->capture_default_str();
  tr->add_option("--out", t.out, "directory for checkpoint, metrics.csv, loss.svg")
      ->capture_default_str();
  tr->add_flag("--shuffle-lines,!--no-shuffle-lines", t.shuffle_lines,
               "shuffle the lines (tang: the poems) before the train/validation split");
  tr->add_option("--steps", t.steps, "optimizer steps")->check(positive)->capture_default_str();
  tr->add_option("--max-seconds", t.max_seconds, "stop (and save) after this long; 0 = never")
      ->check(nonneg)
      ->capture_default_str();
  tr->add_option("--stop-after", t.stop_after,
                 "stop (and save) after this step, as Ctrl-C would; 0 = never")
      ->check(count)
      ->capture_default_str();
  tr->add_option("--batch", t.batch, "sequences per step")->check(size)->capture_default_str();
  tr->add_option("--context", t.context, "tokens per sequence")->check(size)->capture_default_str();
  tr->add_option("--d-model", t.d_model, "width of the residual stream")
      ->check(size)
      ->capture_default_str();
  tr->add_option("--layers", t.layers, "Transformer blocks")->check(size)->capture_default_str();
  tr->add_option("--heads", t.heads, "attention heads")->check(size)->capture_default_str();
  tr->add_flag("--recompute", t.recompute,
               "keep only each block's input for the backward and recompute the rest (less "
               "memory, more time)");
  tr->add_option("--kv-heads", t.kv_heads,
                 "key/value heads, dividing --heads (grouped-query attention; 0 = --heads)")
      ->check(count)
      ->capture_default_str();
  tr->add_option("--d-ff", t.d_ff, "hidden width of the feed-forward")
      ->check(size)
      ->capture_default_str();
  tr->add_flag("--rope,!--no-rope", t.rope, "rotary position embedding")->capture_default_str();
  tr->add_option("--lr", t.lr, "peak learning rate")->check(posreal)->capture_default_str();
  tr->add_option("--min-lr", t.min_lr, "final learning rate")->check(nonneg)->capture_default_str();
  tr->add_option("--warmup", t.warmup, "linear warmup steps")->check(count)->capture_default_str();
  tr->add_option("--weight-decay", t.weight_decay, "AdamW weight decay")
      ->check(nonneg)
      ->capture_default_str();
  tr->add_option("--clip", t.clip, "max global gradient norm (0 = no clipping)")
      ->check(nonneg)
      ->capture_default_str();
  tr->add_option("--eval-every", t.eval_every, "steps between evaluations and checkpoints")
      ->check(positive)
      ->capture_default_str();
  tr->add_option("--eval-tokens", t.eval_tokens, "validation tokens per evaluation")
      ->check(positive)
      ->capture_default_str();
  tr->add_option("--seed", t.seed, "seed of init, data order and line shuffle")
      ->check(count)
      ->capture_default_str();
  tr->add_flag("--json", t.json, "print JSON lines instead of a progress bar");
  tr->add_flag("--resume", t.resume, "continue from OUT/checkpoint.safetensors");
  tr->add_option("--dtype", t.dtype,
                 "f32, or mixed precision: bf16, f16 (with loss scaling); weights stay f32")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}))
      ->capture_default_str();
  tr->add_option("--bucket-kb", t.bucket_kb,
                 "mpirun -np P: KiB of gradients per all-reduce (the buckets of chapter 25)")
      ->check(ex::whole_number(1, int64_t{1} << 30))
      ->capture_default_str();
  tr->add_flag("--overlap,!--no-overlap", t.overlap,
               "mpirun -np P: all-reduce each bucket as soon as backward fills it (else all "
               "after backward)")
      ->capture_default_str();
  tr->add_option("--init-scale", t.init_scale,
                 "f16: the loss scale to start from; it halves on every overflow")
      ->check(posreal)
      ->capture_default_str();

  SampleArgs s;
  CLI::App* sa = app.add_subcommand("sample", "generate text from a checkpoint");
  sa->add_option("--checkpoint", s.checkpoint, "checkpoint written by train")
      ->capture_default_str();
  sa->add_option("--prompt", s.prompt, "text to continue (default: start a new line)");
  sa->add_option("--length", s.length, "tokens to generate")->check(count)->capture_default_str();
  sa->add_option("--temperature", s.temperature, "0 = greedy; higher = more random")
      ->check(nonneg)
      ->capture_default_str();
  sa->add_option("--top-k", s.top_k, "sample among the k most likely (0 = all)")
      ->check(count)
      ->capture_default_str();
  sa->add_option("--top-p", s.top_p,
                 "sample among the most likely whose probabilities add up to p (1 = all)")
      ->check(posreal)
      ->capture_default_str();
  sa->add_option("--seed", s.seed, "sampling seed")->check(count)->capture_default_str();
  sa->add_flag("!--no-cache", s.cache,
               "recompute the whole context for every character instead of using a KV cache");
  if (const auto status = tg::examples::parse_command_line(app, argc, argv)) return *status;
  for (const char* flag : {"--vocab-size", "--min-count"}) {
    if (tr->count(flag) > 0) t.given.emplace_back(flag);
  }
  return tg::examples::run_program("tiny_lm", [&] { return tr->parsed() ? train(t) : sample(s); });
}
