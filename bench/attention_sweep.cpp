// bench/attention_sweep.cpp — attention's two kernels (and the same math composed from
// primitives) as the sequence grows: time of one forward + backward, and the bytes the tape
// saves for backward, per T.
//
//   tapegrad-bench-attention [--sizes "128 256 ..."] [--reps R] [--threads N] [--out DIR]
//                            [--reference-max T] [--composed-max T] [--tile-q Q] [--tile-k K]
//
// One attention call of the tiny LM's layer shape (4 heads of 32, causal, float32), for one
// sequence of T tokens, q, k and v split from (1, T, 4, 32) activations as the model splits
// them. Variants:
//   rows / tiled, fast        the two kernels of ops/attention.h on the fast path (every T)
//   rows / tiled, reference   the same on the reference loops (T <= --reference-max)
//   composed                  matmul, softmax, matmul on the fast path: it saves the T x T
//                             probabilities (T <= --composed-max)
// Each is timed `reps` times after one warm-up; the table gives the median. Saved bytes are
// the tape's own count (tg::nn::measure_step on the sum of the output).
//
// Prints a markdown table and writes DIR/attention.jsonl (one line per variant and T),
// DIR/attention_time.svg and DIR/attention_memory.svg. Speed is measured here, never
// asserted by a test.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/core.h"
#include "examples/common/plot.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

constexpr int64_t kHeads = 4, kHeadDim = 32;

struct Variant {
  std::string name;
  tg::KernelPath path;
  bool composed;
  tg::AttentionKernel kernel;
  std::string color;
};

struct Point {
  double median_ms;
  int64_t saved_bytes;
};

/// softmax(q k^T / sqrt(D) with j > i masked) v from primitives: what a framework without a
/// fused attention records (the probabilities, T x T per head, are saved by the second matmul).
tg::Tensor composed_attention(const tg::Tensor& q, const tg::Tensor& k, const tg::Tensor& v) {
  const int64_t T = q.size(2);
  tg::Tensor hidden = tg::empty({T, T}, tg::kBool);  // key j after query i
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) hidden.data<bool>()[i * T + j] = j > i;
  const tg::Tensor s =
      tg::mul(tg::matmul(q, k.transpose(-2, -1)), 1.0 / std::sqrt(static_cast<double>(q.size(3))));
  const tg::Tensor masked = tg::masked_fill(s, hidden, -INFINITY);
  return tg::matmul(tg::softmax(masked, -1), v);
}

Point measure(const Variant& variant, int64_t T, int reps, tg::AttentionAlgorithm tiles) {
  tg::Generator gen(7);
  auto heads = [&] {
    return tg::randn({1, T, kHeads, kHeadDim}, tg::kFloat32, gen).transpose(1, 2).requires_grad_();
  };
  tg::Tensor q = heads(), k = heads(), v = heads();
  tg::KernelPathGuard path(variant.path);
  tiles.kernel = variant.kernel;
  tg::AttentionAlgorithmGuard algorithm(tiles);
  auto forward = [&] {
    return variant.composed ? composed_attention(q, k, v)
                            : tg::scaled_dot_product_attention(q, k, v, {}, /*causal=*/true);
  };
  Point point{0, 0};
  {
    const tg::Tensor loss = tg::sum(forward());
    point.saved_bytes = tg::nn::measure_step(loss).saved_bytes;
  }
  std::vector<double> ms;
  for (int r = 0; r <= reps; ++r) {  // r = 0 warms up
    for (tg::Tensor* t : {&q, &k, &v}) t->set_grad(tg::Tensor());
    const auto start = std::chrono::steady_clock::now();
    tg::sum(forward()).backward();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (r > 0) ms.push_back(took.count());
  }
  std::sort(ms.begin(), ms.end());
  point.median_ms = ms[ms.size() / 2];
  return point;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attention's kernels as T grows: time and saved bytes"};
  std::string sizes_text = "128 256 512 1024 2048 4096";
  int reps = 5, threads = 0;
  int64_t reference_max = 1024, composed_max = 2048;
  tg::AttentionAlgorithm tiles;  // the tiled kernel's tile sizes
  std::string out = "runs/attention";
  app.add_option("--sizes", sizes_text, "sequence lengths T, separated by spaces");
  app.add_option("--reps", reps, "timed runs per point (the median is reported)")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "threads (0: tg::num_threads())")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--reference-max", reference_max, "largest T for the reference loops");
  app.add_option("--composed-max", composed_max, "largest T for the composed version");
  app.add_option("--tile-q", tiles.tile_q, "query rows per tile")->check(CLI::PositiveNumber);
  app.add_option("--tile-k", tiles.tile_k, "keys per tile")->check(CLI::PositiveNumber);
  app.add_option("--out", out, "directory for attention.jsonl and the two pictures");
  CLI11_PARSE(app, argc, argv);
  std::vector<int64_t> sizes;
  std::istringstream in(sizes_text);
  for (int64_t t; in >> t;) sizes.push_back(t);
  if (sizes.empty() || std::any_of(sizes.begin(), sizes.end(), [](int64_t t) { return t < 1; })) {
    std::fprintf(stderr, "tapegrad-bench-attention: --sizes needs lengths >= 1, got '%s'\n",
                 sizes_text.c_str());
    return 2;
  }
  if (threads > 0) tg::set_num_threads(threads);
  std::filesystem::create_directories(out);

  const tg::KernelPath fast =
      tg::fast_kernels_available() ? tg::KernelPath::kFast : tg::KernelPath::kReference;
  const std::vector<Variant> variants = {
      {"rows, fast", fast, false, tg::AttentionKernel::kRows, "#1f77b4"},
      {"tiled, fast", fast, false, tg::AttentionKernel::kTiled, "#d62728"},
      {"rows, reference", tg::KernelPath::kReference, false, tg::AttentionKernel::kRows, "#9ecae1"},
      {"tiled, reference", tg::KernelPath::kReference, false, tg::AttentionKernel::kTiled,
       "#fc9272"},
      {"composed", fast, true, tg::AttentionKernel::kRows, "#2ca02c"},
  };
  std::ofstream jsonl(out + "/attention.jsonl");
  std::vector<tg::examples::Series> time_series, memory_series;
  std::printf(
      "attention forward + backward, 1 x %lld heads x T x %lld, causal, float32, %d "
      "threads, median of %d\n\n",
      static_cast<long long>(kHeads), static_cast<long long>(kHeadDim), tg::num_threads(), reps);
  std::printf("| variant | T | ms | saved MB |\n|---|---|---|---|\n");
  for (const Variant& variant : variants) {
    tg::examples::Series time{variant.name, variant.color, {}, {}};
    tg::examples::Series memory{variant.name, variant.color, {}, {}};
    for (const int64_t T : sizes) {
      const bool reference = variant.path == tg::KernelPath::kReference && fast != variant.path;
      if (reference && T > reference_max) continue;
      if (variant.composed && T > composed_max) continue;
      const Point p = measure(variant, T, reps, tiles);
      const double mb = static_cast<double>(p.saved_bytes) / (1 << 20);
      std::printf("| %s | %lld | %.3f | %.2f |\n", variant.name.c_str(), static_cast<long long>(T),
                  p.median_ms, mb);
      std::fflush(stdout);
      jsonl << nlohmann::json{{"variant", variant.name},
                              {"T", T},
                              {"heads", kHeads},
                              {"head_dim", kHeadDim},
                              {"threads", tg::num_threads()},
                              {"median_ms", p.median_ms},
                              {"saved_bytes", p.saved_bytes},
                              {"reps", reps}}
                   .dump()
            << "\n";
      time.x.push_back(static_cast<double>(T));
      time.y.push_back(p.median_ms);
      memory.x.push_back(static_cast<double>(T));
      memory.y.push_back(mb);
    }
    time_series.push_back(time);
    memory_series.push_back(memory);
  }
  tg::examples::write_line_plot(out + "/attention_time.svg",
                                "attention forward + backward (4 heads x 32, causal)", "T", "ms",
                                time_series);
  tg::examples::write_line_plot(out + "/attention_memory.svg", "bytes saved for backward", "T",
                                "MB", memory_series);
  std::printf("\nwrote %s/attention.jsonl, attention_time.svg, attention_memory.svg\n",
              out.c_str());
}
