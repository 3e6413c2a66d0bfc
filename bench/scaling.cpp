// bench/scaling.cpp — the tables and pictures of the lm scaling sweep.
//
//   tapegrad-bench-scaling OUT_DIR
//
// Reads every OUT_DIR/*.jsonl (scripts/bench_scaling.sh writes them: the lines of
// tapegrad-bench lm --d-model D --context T and of tests/reference/lm_scaling.py), prints
// one markdown table per sweep (medians over repeated runs; see bench/scaling_table.h for
// the columns and the FLOP count) and writes OUT_DIR/scaling_d_model.svg and
// OUT_DIR/scaling_context.svg.
//
// What the pictures plot. The d_model sweep keeps the tokens of a step fixed (16 x 128), so
// ms per step and ms per token are the same curve; it shows ms per step, the table's unit.
// The context sweep grows the tokens of a step with T, so ms per step rises about linearly
// even when nothing interesting happens, and a linear axis (there is no log scale) hides the
// T^2 term in that slope. Per token, everything linear in T (the projections, the SwiGLU,
// the norms) is a flat line and attention's T^2 work is a line that rises with T: the
// picture shows the T^2 term directly. So the context picture plots microseconds per token.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/scaling_table.h"
#include "core/error.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tapegrad-bench-scaling OUT_DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  if (ec) {
    std::fprintf(stderr, "tapegrad-bench-scaling: cannot list %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  std::sort(files.begin(), files.end());  // a fixed order, whatever the file system's
  std::vector<tg::bench::Measurement> measurements;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "tapegrad-bench-scaling: cannot read %s\n", file.c_str());
      return 1;
    }
    for (auto& m : tg::bench::parse_measurements(in)) measurements.push_back(std::move(m));
  }
  if (measurements.empty()) {
    std::fprintf(stderr, "tapegrad-bench-scaling: no tiny_lm_train_step lines in %s/*.jsonl\n",
                 dir.c_str());
    return 1;
  }

  try {
    const struct {
      tg::bench::Sweep sweep;
      const char* heading;
      const char* svg;
    } sweeps[] = {
        {tg::bench::Sweep::kDModel, "lm step time vs d_model (context 128)", "scaling_d_model.svg"},
        {tg::bench::Sweep::kContext, "lm step time vs context (d_model 128)",
         "scaling_context.svg"},
    };
    for (const auto& s : sweeps) {
      const auto rows = tg::bench::sweep_rows(measurements, s.sweep);
      std::printf("### %s\n\n%s\n", s.heading, tg::bench::markdown_table(rows, s.sweep).c_str());
      tg::bench::write_plot((dir / s.svg).string(), rows, s.sweep);
    }
  } catch (const tg::Error& e) {
    std::fprintf(stderr, "tapegrad-bench-scaling: %s\n", e.what());
    return 1;
  }
  return 0;
}
