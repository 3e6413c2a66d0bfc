// bench/threads.cpp — the tables and pictures of the thread sweep.
//
//   tapegrad-bench-threads OUT_DIR
//
// Reads every OUT_DIR/*.jsonl (scripts/bench_threads.sh writes them: the lines of
// tapegrad-bench and torch_reference.py at each thread count), prints the markdown table of
// bench/threads_table.h (and, where tapegrad-bench ran with --profile, where the time of its
// lm step and mlp epoch went, op by op), and writes OUT_DIR/threads.json (the medians) and
// OUT_DIR/threads_lm.svg and OUT_DIR/threads_mlp.svg (time against threads).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/threads_table.h"
#include "core/error.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tapegrad-bench-threads OUT_DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  if (ec) {
    std::fprintf(stderr, "tapegrad-bench-threads: cannot list %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  std::sort(files.begin(), files.end());
  std::vector<tg::bench::ThreadRun> runs;
  std::vector<tg::bench::ProfileRun> profile;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    for (auto& r : tg::bench::parse_thread_runs(text)) runs.push_back(std::move(r));
    text.clear();
    text.seekg(0);
    for (auto& r : tg::bench::parse_profile_runs(text)) profile.push_back(std::move(r));
  }
  if (runs.empty()) {
    std::fprintf(stderr, "tapegrad-bench-threads: no benchmark lines in %s/*.jsonl\n", dir.c_str());
    return 1;
  }
  try {
    const auto rows = tg::bench::thread_rows(runs);
    std::printf("%s", tg::bench::thread_table(rows).c_str());
    std::printf("%s", tg::bench::profile_table(profile).c_str());
    std::ofstream(dir / "threads.json") << tg::bench::thread_json(rows);
    tg::examples::write_line_plot(
        (dir / "threads_lm.svg").string(), "lm train step vs threads (lower is better)", "threads",
        "ms per step", tg::bench::thread_series(rows, "tiny_lm_train_step"));
    tg::examples::write_line_plot(
        (dir / "threads_mlp.svg").string(), "mlp epoch vs threads (lower is better)", "threads",
        "seconds per epoch", tg::bench::thread_series(rows, "mlp_fashion_mnist_epoch"));
  } catch (const tg::Error& e) {
    std::fprintf(stderr, "tapegrad-bench-threads: %s\n", e.what());
    return 1;
  }
  return 0;
}
