// bench/tapegrad_bench.cpp — tapegrad's side of the side-by-side benchmarks.
//
//   tapegrad-bench <mlp|lm|ops|overhead|core> [--threads N] [--epochs E] [--steps S]
//
// Prints one JSON object per line in the format of ../shared/bench/README.md, with
// "framework": "tapegrad-<version>", so its lines can sit next to those of
// torch_reference.py run in the same sitting. Timing follows the reference exactly:
// 3 warm-up calls, then call until at least `min_s` seconds and 5 calls have passed,
// and report the mean time per call.
//
// The workloads of the reference need the ops and modules of later issues; until those
// land, asking for one fails with a message that says so. `core` measures the tensor
// primitives that exist today (it has no PyTorch counterpart in the reference).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/core.h"

namespace {

struct Options {
  std::string workload;
  int threads = 1;
  int epochs = 5;
  int steps = 20;
};

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

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"tapegrad-bench: the workloads of ../shared/bench/torch_reference.py"};
  app.add_option("workload", opt.workload, "mlp, lm, ops, overhead, or core")
      ->required()
      ->check(CLI::IsMember({"mlp", "lm", "ops", "overhead", "core"}));
  app.add_option("--threads", opt.threads, "worker threads")->check(CLI::PositiveNumber);
  app.add_option("--epochs", opt.epochs, "epochs (mlp)")->check(CLI::PositiveNumber);
  app.add_option("--steps", opt.steps, "timed steps (lm)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  if (opt.threads != 1) {
    std::fprintf(stderr,
                 "tapegrad-bench: tapegrad is single-threaded until the performance "
                 "work lands, so --threads must be 1 (got %d)\n",
                 opt.threads);
    return 2;
  }
  try {
    if (opt.workload == "core") {
      core_workload(opt);
      return 0;
    }
    std::fprintf(stderr,
                 "tapegrad-bench: workload '%s' needs tapegrad's neural-network ops and modules, "
                 "which are not built yet (they arrive with issues 4 and 5); 'core' is "
                 "available now\n",
                 opt.workload.c_str());
    return 2;
  } catch (const tg::Error& e) {
    std::fprintf(stderr, "tapegrad-bench: %s\n", e.what());
    return 1;
  }
}
