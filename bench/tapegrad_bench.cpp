// bench/tapegrad_bench.cpp — tapegrad's side of the side-by-side benchmarks.
//
//   tapegrad-bench <mlp|lm|ops|overhead|core|gemm|sample|tokenizer> [--threads N] [--epochs E]
//                  [--steps S]
//                  [--d-model D] [--context T] [--profile]
//
// Prints one JSON object per line in the format of ../shared/bench/README.md, with
// "framework": "tapegrad-<version>", so its lines can sit next to those of
// torch_reference.py run in the same sitting. Timing follows the reference exactly:
// 3 warm-up calls, then call until at least `min_s` seconds and 5 calls have passed,
// and report the mean time per call.
//
// `mlp`, `lm`, `ops` and `overhead` are the reference's workloads; `core` measures tensor
// primitives and `gemm` the raw matrix multiply (ops/fast/gemm.h): float32 "sgemm" lines
// against the measured FMA peak, and "bf16gemm" lines for bfloat16 operands, one per path
// (neither has a PyTorch counterpart in the reference; bench/blas_gemm.cpp prints the same
// sgemm lines for OpenBLAS when it is installed); `sample` measures generation with and
// without the KV cache (tokens/s, no PyTorch counterpart either); `tokenizer` trains the
// byte-level BPE of nn/bpe.h on the 300 Tang poems (fortunes-zh, titles kept: 84 KB) at 1000
// and 4000 ids and encodes them (median seconds, tokens per character, MB/s; the issue quotes
// Hugging Face tokenizers' figures for the same text, no side here runs it). The lm line also
// reports the peak resident memory of the process (max_rss_mb), which the reference does not, and
// its d_model and context: --d-model and --context resize the lm model for the scaling sweep of
// scripts/bench_scaling.sh (tests/reference/lm_scaling.py is PyTorch's side of it); the defaults
// are the reference's workload.
//
// --profile (lm and mlp) then runs the same steps (or one more epoch) again under a
// tg::Profiler and prints where their time went: one "op_profile" line per op and phase
// (ms per step, calls per step), and one for the time outside every op. The timed lines
// above it are measured without the profiler.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/fast/gemm.h"
#include "ops/ops.h"

#include <sys/resource.h>

namespace {

struct Options {
  std::string workload;
  int threads = 0;  // 0: tg::num_threads() (TAPEGRAD_NUM_THREADS, else one per processor)
  int epochs = 5;
  int steps = 20;
  int64_t d_model = 128;      // lm only: heads stay 4, d_ff = 3 * d_model
  int64_t context = 128;      // lm only: batch stays 16
  bool profile = false;       // lm and mlp: also print where the time goes, op by op
  std::string dtype = "f32";  // lm and the linear lines of ops: "bf16" runs under autocast
  bool recompute = false;     // lm: activation checkpointing of every block (nn/recompute.h)
};

/// The autocast dtype of --dtype: none for f32 (tests/reference/autocast_bench.py is the
/// PyTorch side of the bf16 lines, under torch.autocast("cpu", dtype=torch.bfloat16)).
std::optional<tg::DType> autocast_of(const Options& opt) {
  if (opt.dtype == "bf16") return tg::kBFloat16;
  return std::nullopt;
}

void emit(nlohmann::json line, const Options& opt) {
  line["framework"] = "tapegrad-" TAPEGRAD_VERSION;
  line["threads"] = opt.threads;
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
}

// Mean seconds per call of fn, measured like torch_reference.py's bench().
template <class Fn>
double seconds_per_call(Fn&& fn, double min_s = 0.5) {
  for (int i = 0; i < 3; ++i) fn();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (int n = 1;; ++n) {
    fn();
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (dt > min_s && n >= 5) return dt / n;
  }
}

double round_to(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

// Runs `steps` calls of step() under a Profiler and prints its rows per step, then the time
// outside every op (the whole time minus the rows, which never overlap).
template <class Step>
void emit_profile(const char* of, int64_t steps, Step&& step, const Options& opt) {
  using Clock = std::chrono::steady_clock;
  tg::Profiler profiler;
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < steps; ++i) step(i);
  const double total = std::chrono::duration<double>(Clock::now() - t0).count();
  profiler.stop();
  double inside = 0;
  auto line = [&](const std::string& op, const std::string& phase, double calls, double s) {
    emit({{"workload", "op_profile"},
          {"of", of},
          {"op", op},
          {"phase", phase},
          {"calls_per_step", round_to(calls / double(steps), 2)},
          {"ms_per_step", round_to(s / double(steps) * 1e3, 4)},
          {"share", round_to(s / total, 4)}},
         opt);
  };
  for (const tg::OpTime& row : profiler.results()) {
    line(row.op, row.phase, double(row.calls), row.seconds);
    inside += row.seconds;
  }
  line("(outside ops)", "-", 0, std::max(0.0, total - inside));
}

// Today's primitives: view bookkeeping, strided copies and float16 conversion.
void core_workload(const Options& opt) {
  tg::Generator gen(0);
  const tg::Tensor x = tg::randn({1024, 1024}, tg::kFloat32, gen);
  const double bytes = 2.0 * static_cast<double>(x.numel()) * 4;  // read + write

  double s = seconds_per_call([&] {
    tg::Tensor v = x;
    for (int i = 0; i < 100; ++i) v = v.transpose(0, 1).narrow(0, 0, 1024).view({1024, 1024});
  });
  emit({{"workload", "view_overhead"}, {"views", 300}, {"us_per_view", round_to(s / 300 * 1e6, 4)}},
       opt);

  s = seconds_per_call([&] { (void)x.clone(); });
  emit({{"workload", "copy_contiguous"},
        {"shape", {1024, 1024}},
        {"ms", round_to(s * 1e3, 4)},
        {"gb_per_s", round_to(bytes / s / 1e9, 2)}},
       opt);

  s = seconds_per_call([&] { (void)x.t().contiguous(); });
  emit({{"workload", "copy_transposed"},
        {"shape", {1024, 1024}},
        {"ms", round_to(s * 1e3, 4)},
        {"gb_per_s", round_to(bytes / s / 1e9, 2)}},
       opt);

  s = seconds_per_call([&] { (void)x.to(tg::kFloat16); });
  emit({{"workload", "to_float16"},
        {"shape", {1024, 1024}},
        {"ms", round_to(s * 1e3, 4)},
        {"melem_per_s", round_to(static_cast<double>(x.numel()) / s / 1e6, 1)}},
       opt);
}

// The FP32 peak of one core, measured: 16 independent chains of vector FMAs (enough to
// cover the FMA latency on both FMA units), 2 flops per lane per FMA.
#if defined(__x86_64__)
__attribute__((target("avx512f"))) double fma_peak_avx512(int64_t iterations) {
  using V = float __attribute__((vector_size(64)));
  V acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = V{} + static_cast<float>(i);
  V x = V{} + 1.0f, y = V{} + 1e-7f;
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = acc[i] * x + y;
    asm volatile("" : "+v"(x));  // keep the loop from being folded away
  }
  float sum = 0;
  for (int i = 0; i < 16; ++i) sum += acc[i][0];
  return static_cast<double>(sum);
}
#endif

// The FP32 peak of tg::num_threads() cores: every thread runs the FMA chains at once.
double measured_peak_gflops() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    const int64_t iterations = 20'000'000;
    const int threads = tg::num_threads();
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      tg::parallel_for(threads, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          volatile double sink = fma_peak_avx512(iterations);
          (void)sink;
        }
      });
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, threads * 16.0 * 16 * 2 * static_cast<double>(iterations) / s / 1e9);
    }
    return best;
  }
#endif
  return 0;  // unknown
}

// Square float32 C = A B through ops/fast/gemm.h on --threads threads; GFLOP/s and the fraction
// of the peak measured on as many cores. Then the same products on bfloat16 A and B (float32
// C): one "bf16gemm" line per bfloat16 path this CPU has (vdpbf16ps, and widening to float),
// with the ratio to the sgemm line of the same shape.
void gemm_workload(const Options& opt) {
  const double peak = measured_peak_gflops();
  emit({{"workload", "fma_peak"}, {"gflops", round_to(peak, 2)}}, opt);
  tg::Generator gen(0);
  for (int64_t n : {256, 512, 1024, 2048}) {
    const tg::Tensor a = tg::randn({n, n}, tg::kFloat32, gen);
    const tg::Tensor b = tg::randn({n, n}, tg::kFloat32, gen);
    tg::Tensor c = tg::zeros({n, n}, tg::kFloat32);
    const double s = seconds_per_call([&] {
      tg::gemm(false, false, n, n, n, 1.0f, a.data<float>(), n, b.data<float>(), n, 0.0f,
               c.data<float>(), n);
    });
    const double flop = 2.0 * double(n) * double(n) * double(n);
    const double gflops = flop / s / 1e9;
    emit({{"workload", "sgemm"},
          {"shape", {n, n, n}},
          {"path", tg::detail::gemm_path_name(tg::detail::best_gemm_path())},
          {"ms", round_to(s * 1e3, 4)},
          {"gflops", round_to(gflops, 2)},
          {"fraction_of_peak", peak > 0 ? round_to(gflops / peak, 3) : 0.0}},
         opt);
    const tg::Tensor a16 = a.to(tg::kBFloat16), b16 = b.to(tg::kBFloat16);
    const bool dot = tg::detail::gemm_bf16_dot_supported();
    for (bool use_dot : {true, false}) {
      if (use_dot && !dot) continue;
      if (dot) tg::detail::set_gemm_bf16_dot(use_dot);
      const double s16 = seconds_per_call([&] {
        tg::gemm(false, false, n, n, n, 1.0f, a16.data<tg::BFloat16>(), n, b16.data<tg::BFloat16>(),
                 n, 0.0f, c.data<float>(), n);
      });
      emit({{"workload", "bf16gemm"},
            {"shape", {n, n, n}},
            {"path", tg::detail::gemm_bf16_path_name()},
            {"ms", round_to(s16 * 1e3, 4)},
            {"gflops", round_to(flop / s16 / 1e9, 2)},
            {"x_sgemm", round_to(s / s16, 3)}},
           opt);
    }
    if (dot) tg::detail::set_gemm_bf16_dot(true);
  }
}

// The "ops" workload of torch_reference.py: single fused ops, forward + backward, with
// gradients accumulating call after call exactly as there (no zero_grad in between).
void ops_workload(const Options& opt) {
  tg::Generator gen(0);
  const int64_t linear_shapes[][3] = {
      {128, 784, 256}, {2048, 128, 384}, {512, 512, 512}, {1024, 1024, 1024}};
  for (const auto& [m, k, n] : linear_shapes) {
    const tg::Tensor x = tg::randn({m, k}, tg::kFloat32, gen).requires_grad_();
    const tg::Tensor w = tg::randn({n, k}, tg::kFloat32, gen).requires_grad_();
    const tg::Tensor b = tg::randn({n}, tg::kFloat32, gen).requires_grad_();
    const double s = seconds_per_call([&] {
      tg::Tensor y;
      {
        std::optional<tg::AutocastGuard> autocast;
        if (autocast_of(opt)) autocast.emplace(*autocast_of(opt));
        y = tg::linear(x, w, b);
      }
      tg::sum(y).backward();
    });
    emit({{"workload", "linear_fwd_bwd"},
          {"dtype", opt.dtype},
          {"shape", {m, k, n}},
          {"ms", round_to(s * 1e3, 4)},
          {"gflops", round_to(6.0 * double(m) * double(k) * double(n) / s / 1e9, 2)}},
         opt);
  }
  const int64_t norm_shapes[][2] = {{2048, 128}, {4096, 1024}};
  for (const auto& [rows, d] : norm_shapes) {
    const tg::Tensor x = tg::randn({rows, d}, tg::kFloat32, gen).requires_grad_();
    const tg::Tensor w = tg::ones({d}, tg::kFloat32).requires_grad_();
    const tg::Tensor g = tg::randn({rows, d}, tg::kFloat32, gen);
    const double s = seconds_per_call([&] { tg::rms_norm(x, w, 1e-5).backward(g); });
    emit({{"workload", "rmsnorm_fwd_bwd"}, {"shape", {rows, d}}, {"ms", round_to(s * 1e3, 4)}},
         opt);
  }
  const int64_t ce_shapes[][2] = {{2048, 128}, {4096, 1024}};
  for (const auto& [rows, v] : ce_shapes) {
    const tg::Tensor x = tg::randn({rows, v}, tg::kFloat32, gen).requires_grad_();
    const tg::Tensor y = tg::randint(0, v, {rows}, tg::kInt64, gen);
    const double s = seconds_per_call([&] { tg::cross_entropy(x, y).backward(); });
    emit(
        {{"workload", "cross_entropy_fwd_bwd"}, {"shape", {rows, v}}, {"ms", round_to(s * 1e3, 4)}},
        opt);
  }
  const int64_t emb_shapes[][3] = {{2048, 128, 128}, {8192, 50257, 64}};
  for (const auto& [n_tok, vocab, d] : emb_shapes) {
    const tg::Tensor table = tg::randn({vocab, d}, tg::kFloat32, gen).requires_grad_();
    const tg::Tensor ids = tg::randint(0, vocab, {n_tok}, tg::kInt64, gen);
    const double s = seconds_per_call([&] { tg::sum(tg::embedding(ids, table)).backward(); });
    emit({{"workload", "embedding_fwd_bwd"},
          {"shape", {n_tok, vocab, d}},
          {"ms", round_to(s * 1e3, 4)}},
         opt);
  }
}

// The "overhead" workload: 500 x (y = relu(y * 1.0001)) on 4 elements, then backward —
// 1000 recorded ops, so the figure is the per-op cost of the tape, not of arithmetic.
void overhead_workload(const Options& opt) {
  tg::Generator gen(0);
  const tg::Tensor x = tg::randn({4}, tg::kFloat32, gen).requires_grad_();
  const double s = seconds_per_call(
      [&] {
        tg::Tensor y = x;
        for (int i = 0; i < 500; ++i) y = tg::relu(y * 1.0001);
        tg::sum(y).backward();
      },
      1.0);
  emit(
      {{"workload", "tiny_op_overhead"}, {"ops", 1000}, {"us_per_op", round_to(s / 1000 * 1e6, 3)}},
      opt);
}

// The "mlp" workload: Fashion-MNIST, MLP 784-256-128-10, AdamW, batch 128, reshuffled each
// epoch; one line per epoch with the training seconds (data already in memory) and the test
// accuracy after it. The images stay bytes (nn::FashionMnist) and each batch is widened to
// float32 as it is gathered: the same float32 inputs as PyTorch's, in a quarter of the memory.
void mlp_workload(const Options& opt) {
  const auto train =
      std::make_shared<const tg::nn::FashionMnist>(std::string(tg::nn::kFashionMnistDir), "train");
  const auto test =
      std::make_shared<const tg::nn::FashionMnist>(std::string(tg::nn::kFashionMnistDir), "test");
  tg::Generator gen(0);
  tg::nn::MLP model({784, 256, 128, 10}, {}, gen);
  tg::nn::AdamW adamw(model.parameters(),
                      {.lr = 1e-3, .betas = {0.9, 0.999}, .eps = 1e-8, .weight_decay = 0.01});
  tg::nn::DataLoader loader(train, {.batch_size = 128}, gen);
  tg::nn::DataLoader test_loader(test, {.batch_size = 1000, .shuffle = false}, gen);
  tg::Tensor loss;
  auto train_epoch = [&] {
    model.train();
    for (const std::vector<tg::Tensor>& batch : loader) {
      loss = tg::cross_entropy(model(batch[0]), batch[1]);
      adamw.zero_grad();
      loss.backward();
      adamw.step();
    }
  };
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    train_epoch();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    double correct = 0;
    {
      tg::NoGradGuard no_grad;
      model.eval();
      for (const std::vector<tg::Tensor>& batch : test_loader) {
        const std::vector<int64_t> predicted =
            tg::max(model(batch[0]), -1).indices.to_vector<int64_t>();
        const std::vector<int64_t> labels = batch[1].to_vector<int64_t>();
        for (size_t i = 0; i < labels.size(); ++i) correct += predicted[i] == labels[i];
      }
    }
    const double accuracy = correct / static_cast<double>(test->size());
    emit({{"workload", "mlp_fashion_mnist_epoch"},
          {"epoch", epoch},
          {"seconds", round_to(seconds, 4)},
          {"last_loss", round_to(static_cast<double>(loss.item<float>()), 4)},
          {"test_accuracy", round_to(accuracy, 4)}},
         opt);
  }
  if (opt.profile)
    emit_profile(
        "mlp_fashion_mnist_epoch", 1, [&](int64_t) { train_epoch(); }, opt);
}

// The "lm" workload: the reference's tiny pre-norm Transformer (vocab 128, context 128,
// d_model 128, 4 layers, 4 heads, SwiGLU 384, no RoPE), batch 16 x 128 random tokens,
// AdamW lr 3e-4; 5 warm-up steps, then the mean of --steps steps. --d-model D and
// --context T resize it the way the scaling sweep does: SwiGLU width 3 * D (384 at 128),
// still 4 layers and 4 heads, still batch 16, so a step sees 16 * T tokens.
void lm_workload(const Options& opt) {
  const int64_t V = 128, T = opt.context, B = 16, D = opt.d_model;
  tg::Generator gen(0);
  tg::nn::TransformerLM model({.vocab_size = V,
                               .context_length = T,
                               .d_model = D,
                               .n_layers = 4,
                               .n_heads = 4,
                               .d_ff = 3 * D},
                              gen);
  model.set_recompute_blocks(opt.recompute);
  tg::nn::AdamW adamw(model.parameters(), {.lr = 3e-4});
  const tg::Tensor data = tg::randint(0, V, {opt.steps + 5, B, T + 1}, tg::kInt64, gen);
  tg::Tensor loss;
  int64_t saved_bytes = 0;  // what the tape holds at the end of a forward
  auto step = [&](int64_t i) {
    const tg::Tensor batch = data[i];
    const tg::Tensor x = batch.narrow(1, 0, T), y = batch.narrow(1, 1, T);
    {
      std::optional<tg::AutocastGuard> autocast;  // --dtype bf16: mixed precision
      if (autocast_of(opt)) autocast.emplace(*autocast_of(opt));
      loss = tg::cross_entropy(model(x), y);
    }
    if (i == 0) saved_bytes = tg::nn::measure_step(loss).saved_bytes;
    adamw.zero_grad();
    loss.backward();
    adamw.step();
  };
  for (int64_t i = 0; i < 5; ++i) step(i);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < opt.steps; ++i) step(5 + i);
  const double dt = std::chrono::duration<double>(Clock::now() - t0).count() / opt.steps;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  emit({{"workload", "tiny_lm_train_step"},
        {"dtype", opt.dtype},
        {"d_model", D},
        {"context", T},
        {"params", model.num_parameters()},
        {"ms_per_step", round_to(dt * 1e3, 3)},
        {"tokens_per_s", round_to(double(B * T) / dt, 1)},
        {"last_loss", round_to(static_cast<double>(loss.item<float>()), 4)},
        {"recompute", opt.recompute},
        {"saved_mb", round_to(static_cast<double>(saved_bytes) / (1 << 20), 2)},
        {"max_rss_mb", round_to(static_cast<double>(usage.ru_maxrss) / 1024.0, 1)}},
       opt);
  // The same batches again: the profile sees the steps the timing saw.
  if (opt.profile)
    emit_profile(
        "tiny_lm_train_step", opt.steps, [&](int64_t i) { step(5 + i); }, opt);
}

// The "sample" workload: generation with the lm workload's model (random weights, batch 1),
// greedy, one token at a time from a one-token prompt until the context is full: with the
// KV cache (a new position against the cached ones) and without it (the whole prefix
// recomputed for every token, as tiny_lm sample --no-cache does). Tokens per second, the
// best of 3 runs each; the model has no PyTorch counterpart in the reference.
void sample_workload(const Options& opt) {
  const int64_t V = 128, T = opt.context, D = opt.d_model;
  tg::Generator gen(0);
  const tg::nn::TransformerConfig config{.vocab_size = V,
                                         .context_length = T,
                                         .d_model = D,
                                         .n_layers = 4,
                                         .n_heads = 4,
                                         .d_ff = 3 * D};
  tg::nn::TransformerLM model(config, gen);
  tg::NoGradGuard no_grad;
  auto argmax = [](const tg::Tensor& logits) {
    const std::vector<float> l = logits.to_vector<float>();
    return static_cast<int64_t>(std::max_element(l.begin(), l.end()) - l.begin());
  };
  for (const bool cached : {true, false}) {
    double best = 0;
    for (int run = 0; run < 3; ++run) {
      std::vector<int64_t> ids = {0};
      tg::nn::KVCache cache(config, 1);
      const auto t0 = std::chrono::steady_clock::now();
      while (static_cast<int64_t>(ids.size()) < T) {
        const auto t = static_cast<int64_t>(ids.size());
        const tg::Tensor logits =
            cached ? model(tg::tensor(std::vector<int64_t>{ids.back()}, {1}), cache)[0]
                   : model(tg::tensor(ids, {t}))[t - 1];
        ids.push_back(argmax(logits));
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, double(T - 1) / s);
    }
    emit({{"workload", "tiny_lm_sample"},
          {"kv_cache", cached},
          {"d_model", D},
          {"context", T},
          {"tokens", T - 1},
          {"tokens_per_s", round_to(best, 1)}},
         opt);
  }
}

// The "tokenizer" workload: BPE training and encoding on the Tang poems, median of 7 runs
// each (single-threaded code: --threads changes nothing).
void tokenizer_workload(const Options& opt) {
  std::string text;
  for (const std::string& poem :
       tg::nn::read_fortunes(tg::nn::kTangPoemsPath, {.keep_titles = true})) {
    text += poem + "\n";
  }
  const auto chars = static_cast<double>(tg::nn::utf8::count_chars(text));
  auto median_s = [](auto&& f) {
    std::vector<double> t;
    for (int run = 0; run < 7; ++run) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::ranges::sort(t);
    return t[t.size() / 2];
  };
  for (const int64_t vocab : {1000, 4000}) {
    std::optional<tg::nn::BpeTokenizer> tok;
    const double train_s =
        median_s([&] { tok = tg::nn::BpeTokenizer::train(text, {.vocab_size = vocab}); });
    std::vector<int64_t> ids;
    const double encode_s = median_s([&] { ids = tok->encode(text); });
    emit({{"workload", "bpe_train"},
          {"corpus", "tang300 with titles"},
          {"bytes", text.size()},
          {"vocab_size", vocab},
          {"median_s", round_to(train_s, 4)}},
         opt);
    emit({{"workload", "bpe_encode"},
          {"corpus", "tang300 with titles"},
          {"vocab_size", vocab},
          {"tokens_per_char", round_to(static_cast<double>(ids.size()) / chars, 3)},
          {"median_s", round_to(encode_s, 5)},
          {"mb_per_s", round_to(static_cast<double>(text.size()) / encode_s / 1e6, 1)}},
         opt);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"tapegrad-bench: the workloads of ../shared/bench/torch_reference.py"};
  app.add_option("workload", opt.workload,
                 "mlp, lm, ops, overhead, core, gemm, sample, or tokenizer")
      ->required()
      ->check(
          CLI::IsMember({"mlp", "lm", "ops", "overhead", "core", "gemm", "sample", "tokenizer"}));
  app.add_option("--threads", opt.threads,
                 "worker threads (default: TAPEGRAD_NUM_THREADS, else one per processor)")
      ->check(CLI::PositiveNumber);
  app.add_option("--epochs", opt.epochs, "epochs (mlp)")->check(CLI::PositiveNumber);
  app.add_option("--steps", opt.steps, "timed steps (lm)")->check(CLI::PositiveNumber);
  app.add_option("--d-model", opt.d_model,
                 "lm and sample width, a multiple of the 4 heads (default 128)")
      ->check(CLI::PositiveNumber);
  app.add_option("--context", opt.context,
                 "lm and sample context length (lm: batch stays 16; default 128)")
      ->check(CLI::PositiveNumber);
  app.add_option("--dtype", opt.dtype,
                 "lm and ops' linear lines: f32, or bf16 under autocast (mixed precision)")
      ->check(CLI::IsMember({"f32", "bf16"}));
  app.add_flag("--recompute", opt.recompute,
               "lm: activation checkpointing of every block (its activations recomputed in the "
               "backward)");
  app.add_flag("--profile", opt.profile,
               "lm, mlp: then print where the time goes, op by op (\"op_profile\" lines)");
  CLI11_PARSE(app, argc, argv);

  try {
    if (opt.threads == 0) opt.threads = tg::num_threads();
    tg::set_num_threads(opt.threads);
    if (opt.workload == "core") {
      core_workload(opt);
      return 0;
    }
    if (opt.workload == "gemm") {
      gemm_workload(opt);
      return 0;
    }
    if (opt.workload == "ops") {
      ops_workload(opt);
      return 0;
    }
    if (opt.workload == "overhead") {
      overhead_workload(opt);
      return 0;
    }
    if (opt.workload == "mlp") {
      mlp_workload(opt);
      return 0;
    }
    if (opt.workload == "tokenizer") {
      tokenizer_workload(opt);
      return 0;
    }
    if (opt.workload == "sample") {
      sample_workload(opt);
      return 0;
    }
    lm_workload(opt);
    return 0;
  } catch (const tg::Error& e) {
    std::fprintf(stderr, "tapegrad-bench: %s\n", e.what());
    return 1;
  }
}
