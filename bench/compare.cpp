// bench/compare.cpp — turns the JSON lines of one side-by-side sitting into a table of
// medians and ratios (the table docs/performance.md quotes).
//
//   tapegrad-bench-compare FILE...
//
// Each FILE holds JSON lines from tapegrad-bench, torch_reference.py, tapegrad-bench-blas
// or scripts/bench_side_by_side.sh's peak-memory lines. Lines are grouped by workload,
// shape, threads (for sgemm) and framework; PyTorch's lines count only when marked
// "best": true (its fastest thread setting, as the reference's --best prints it). Each
// group's figure is the MEDIAN over repetitions, and the ratio says how many times better
// tapegrad is: PyTorch time / tapegrad time (or tapegrad GFLOP/s / OpenBLAS GFLOP/s).
// (Accuracy is not compared here: one run's accuracy is mostly its seed; docs/performance.md
// compares 20 seeds of each.)
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

// What a workload is judged by; lower_is_better for times and memory.
struct Figure {
  const char* name;
  bool lower_is_better;
};

const std::map<std::string, Figure>& figures() {
  static const std::map<std::string, Figure> table = {
      {"tiny_op_overhead", {"us_per_op", true}},
      {"linear_fwd_bwd", {"ms", true}},
      {"rmsnorm_fwd_bwd", {"ms", true}},
      {"cross_entropy_fwd_bwd", {"ms", true}},
      {"embedding_fwd_bwd", {"ms", true}},
      {"tiny_lm_train_step", {"tokens_per_s", false}},
      {"mlp_fashion_mnist_epoch", {"seconds", true}},
      {"peak_rss", {"max_rss_mb", true}},
      {"sgemm", {"gflops", false}},
  };
  return table;
}

// (Type checks and JSON comparisons throughout, not line.value(key, default): that throws
// nlohmann's own type_error where a field has another type, and a result line of the wrong
// shape is skipped like any other line that is no result.)
std::string family(const json& line) {
  const bool named = line.contains("framework") && line["framework"].is_string();
  const std::string fw = named ? line["framework"].get<std::string>() : "";
  if (fw.rfind("pytorch", 0) == 0) return "pytorch";
  if (fw.rfind("tapegrad", 0) == 0) return "tapegrad";
  if (fw.rfind("openblas", 0) == 0) return "openblas";
  return fw;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tapegrad-bench-compare FILE...\n");
    return 2;
  }
  std::vector<json> lines;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    if (!in) {
      std::fprintf(stderr, "tapegrad-bench-compare: cannot read %s\n", argv[i]);
      return 1;
    }
    std::string text;
    while (std::getline(in, text)) {
      json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!line.is_object() || !line.contains("workload") || !line["workload"].is_string())
        continue;  // not a result line
      // PyTorch counts at its best thread setting only; peak memory lines have no setting.
      if (family(line) == "pytorch" && !(line.contains("best") && line["best"] == true) &&
          line["workload"] != "peak_rss") {
        continue;
      }
      lines.push_back(std::move(line));
    }
  }
  // key (workload + shape [+ threads]) -> family -> values
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
  std::map<std::string, std::string> workload_of;
  auto add = [&](const std::string& key, const std::string& workload, const json& line) {
    const Figure fig = figures().at(workload);
    if (!line.contains(fig.name) || !line[fig.name].is_number()) return;
    values[key][family(line)].push_back(line[fig.name].get<double>());
    workload_of[key] = workload;
  };
  for (const json& line : lines) {
    const std::string workload = line["workload"];
    if (!figures().count(workload)) continue;
    std::string key = workload;
    if (line.contains("shape")) key += " " + line["shape"].dump();
    if (workload == "sgemm") {
      const bool counted = line.contains("threads") && line["threads"].is_number_integer();
      key += " threads=" + std::to_string(counted ? line["threads"].get<int64_t>() : 1);
    }
    add(key, workload, line);
  }

  std::printf(
      "| workload | figure | PyTorch / OpenBLAS (median) | tapegrad (median) | runs | ratio |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const auto& [key, by_family] : values) {
    const Figure fig = figures().at(workload_of[key]);
    const bool blas = workload_of[key] == "sgemm";
    const auto other = by_family.find(blas ? "openblas" : "pytorch");
    const auto ours = by_family.find("tapegrad");
    if (ours == by_family.end()) continue;
    const double t = median(ours->second);
    if (other == by_family.end()) {
      std::printf("| %s | %s | - | %.4g | %zu | - |\n", key.c_str(), fig.name, t,
                  ours->second.size());
      continue;
    }
    const double o = median(other->second);
    // "x times better": for times, theirs / ours; for rates, ours / theirs.
    const double ratio = fig.lower_is_better ? o / t : t / o;
    std::printf("| %s | %s | %.4g | %.4g | %zu / %zu | %.2f%s |\n", key.c_str(), fig.name, o, t,
                other->second.size(), ours->second.size(), ratio,
                blas                             ? " of OpenBLAS"
                : workload_of[key] == "peak_rss" ? "x less"
                : fig.lower_is_better            ? "x faster"
                                                 : "x");
  }
  return 0;
}
