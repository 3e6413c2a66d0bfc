// bench/threads_table.cpp — see threads_table.h.
#include "bench/threads_table.h"

#include "bench/scaling_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

namespace tg::bench {
namespace {

using nlohmann::json;

std::string number(double v) {
  if (!std::isfinite(v)) return "-";
  return v >= 100  ? fmt::format("{:.0f}", v)
         : v >= 10 ? fmt::format("{:.1f}", v)
                   : fmt::format("{:.3g}", v);
}

std::string label(const ThreadRow& row) {
  std::string s = row.workload;
  if (!row.shape.empty() && row.shape.front() == '"') {
    s += " " + json::parse(row.shape).get<std::string>();  // the workload a peak_rss line is of
  } else if (!row.shape.empty()) {
    s += " " + row.shape;
  }
  return s + " (" + row.figure + ")";
}

// PyTorch's best: its lowest median over every thread count it ran at.
double pytorch_best(const ThreadRow& row, int* at) {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (const int threads : thread_counts({row})) {
    const double m = median_at(row, "pytorch", threads);
    if (std::isfinite(m) && !(m >= best)) {
      best = m;
      *at = threads;
    }
  }
  return best;
}

// The frameworks of a row that count as `framework`: itself, and for PyTorch each of its
// thread settings ("pytorch 1/2": 1 intra-op thread, 2 OpenBLAS threads).
bool is_setting_of(const std::string& key, const std::string& framework) {
  return key == framework || key.rfind(framework + " ", 0) == 0;
}

}  // namespace

const std::map<std::string, std::string>& thread_figures() {
  static const std::map<std::string, std::string> figures = {
      {"tiny_lm_train_step", "ms_per_step"},
      {"mlp_fashion_mnist_epoch", "seconds"},
      {"linear_fwd_bwd", "ms"},
      {"rmsnorm_fwd_bwd", "ms"},
      {"cross_entropy_fwd_bwd", "ms"},
      {"embedding_fwd_bwd", "ms"},
      {"tiny_op_overhead", "us_per_op"},
      {"peak_rss", "max_rss_kb"},
  };
  return figures;
}

std::vector<ThreadRun> parse_thread_runs(std::istream& in) {
  std::vector<ThreadRun> out;
  for (std::string text; std::getline(in, text);) {
    const json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!line.is_object() || !line.contains("workload") || !line["workload"].is_string()) continue;
    // (JSON comparisons, not line.value(key, default): that throws nlohmann's own type_error
    // where the field has another type, and a result file is whatever the user points at.)
    if (line.contains("best") && line["best"] == true) continue;  // a copy of a run already read
    const auto fig = thread_figures().find(line["workload"].get<std::string>());
    if (fig == thread_figures().end()) continue;
    if (!line.contains("framework") || !line["framework"].is_string() ||
        !line.contains(fig->second) || !line[fig->second].is_number())
      continue;
    // torch_reference.py's ops and overhead lines name only their OpenBLAS threads, which
    // the sweep sets equal to PyTorch's own ("--threads T --blas-threads T").
    int threads = 0;
    if (line.contains("threads") && line["threads"].is_number_integer()) {
      threads = line["threads"].get<int>();
    } else if (line.contains("blas_threads") && line["blas_threads"].is_string()) {
      const std::string b = line["blas_threads"].get<std::string>();
      if (b.empty() || b.size() > 6 || b.find_first_not_of("0123456789") != std::string::npos)
        continue;  // (more digits than any machine's threads would overflow std::stoi)
      threads = std::stoi(b);
    } else {
      continue;
    }
    // The sweep tags PyTorch's lines with the thread count it gave them and the setting
    // ("intra-op threads/OpenBLAS threads"), since an ops line names only its BLAS threads.
    if (line.contains("sweep_threads") && line["sweep_threads"].is_number_integer())
      threads = line["sweep_threads"].get<int>();
    ThreadRun r;
    r.workload = fig->first;
    if (line.contains("setting") && line["setting"].is_string())
      r.setting = line["setting"].get<std::string>();
    // A peak_rss line (GNU time around a run) says which workload it measured in "of".
    r.shape = line.contains("shape") ? line["shape"].dump()
              : line.contains("of")  ? line["of"].dump()
                                     : "";
    r.framework = framework_family(line["framework"].get<std::string>());
    r.threads = threads;
    r.value = line[fig->second].get<double>();
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ThreadRow> thread_rows(const std::vector<ThreadRun>& runs) {
  // The lm and mlp first: they are what a user trains.
  const std::vector<std::string> order = {
      "tiny_lm_train_step",    "mlp_fashion_mnist_epoch", "linear_fwd_bwd",   "rmsnorm_fwd_bwd",
      "cross_entropy_fwd_bwd", "embedding_fwd_bwd",       "tiny_op_overhead", "peak_rss"};
  std::vector<ThreadRow> rows;
  for (const std::string& workload : order) {
    std::vector<std::string> shapes;  // in input order
    for (const ThreadRun& r : runs)
      if (r.workload == workload &&
          std::find(shapes.begin(), shapes.end(), r.shape) == shapes.end())
        shapes.push_back(r.shape);
    for (const std::string& shape : shapes) {
      ThreadRow row{workload, shape, thread_figures().at(workload), {}};
      for (const ThreadRun& r : runs)
        if (r.workload == workload && r.shape == shape)
          row.runs[r.setting.empty() ? r.framework : r.framework + " " + r.setting][r.threads]
              .push_back(r.value);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<int> thread_counts(const std::vector<ThreadRow>& rows) {
  std::set<int> all;
  for (const ThreadRow& row : rows)
    for (const auto& [framework, by_threads] : row.runs)
      for (const auto& [threads, values] : by_threads) all.insert(threads);
  return {all.begin(), all.end()};
}

double median_at(const ThreadRow& row, const std::string& framework, int threads,
                 std::string* setting) {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [key, by_threads] : row.runs) {
    if (!is_setting_of(key, framework)) continue;
    const auto t = by_threads.find(threads);
    if (t == by_threads.end() || t->second.empty()) continue;
    const double m = median(t->second);
    if (!(m >= best)) {
      best = m;
      if (setting != nullptr) *setting = key == framework ? "" : key.substr(framework.size() + 1);
    }
  }
  return best;
}

std::string thread_table(const std::vector<ThreadRow>& rows) {
  const std::vector<int> threads = thread_counts(rows);
  std::string out = "| workload (figure) |";
  std::string rule = "|---|";
  for (const int t : threads) {
    out += fmt::format(" {} thread{} |", t, t == 1 ? "" : "s");
    rule += "---|";
  }
  out += " PyTorch best |\n" + rule + "---|\n";
  for (const ThreadRow& row : rows) {
    out += "| " + label(row) + " |";
    for (const int t : threads) {
      std::string setting;
      const double ours = median_at(row, "tapegrad", t),
                   theirs = median_at(row, "pytorch", t, &setting);
      const std::string theirs_text =
          number(theirs) + (setting.empty() ? "" : " [" + setting + "]");
      if (std::isfinite(ours) && std::isfinite(theirs))
        out += fmt::format(" {} / {} ({:.2f}x) |", number(ours), theirs_text, theirs / ours);
      else out += fmt::format(" {} / {} |", number(ours), theirs_text);
    }
    int at = 0;
    const double best = pytorch_best(row, &at);
    out += std::isfinite(best) ? fmt::format(" {} at {} |\n", number(best), at) : " - |\n";
  }
  out +=
      "\nEach cell: tapegrad / PyTorch, medians at that thread count (lower is better), and in "
      "brackets how many times faster tapegrad is (PyTorch / tapegrad; for peak_rss, how many "
      "times less memory it needs). Where PyTorch ran at several thread settings, its fastest "
      "counts, named in square brackets: [T/B] is T intra-op threads and B OpenBLAS threads.\n";

  // Scaling of tapegrad itself, for what a user trains.
  std::string scaling;
  for (const ThreadRow& row : rows) {
    if (row.workload != "tiny_lm_train_step" && row.workload != "mlp_fashion_mnist_epoch") continue;
    const double one = median_at(row, "tapegrad", 1);
    if (!std::isfinite(one)) continue;
    scaling += "| " + label(row) + " |";
    for (const int t : threads) {
      const double m = median_at(row, "tapegrad", t);
      scaling += std::isfinite(m) ? fmt::format(" {:.2f}x, {:.0f}% |", one / m, 100 * one / m / t)
                                  : std::string(" - |");
    }
    scaling += "\n";
  }
  if (!scaling.empty()) {
    out += "\n| tapegrad: speed-up over 1 thread, parallel efficiency |";
    std::string rule2 = "|---|";
    for (const int t : threads) {
      out += fmt::format(" {} |", t);
      rule2 += "---|";
    }
    out += "\n" + rule2 + "\n" + scaling;
  }
  return out;
}

std::string thread_json(const std::vector<ThreadRow>& rows) {
  json all = json::array();
  for (const ThreadRow& row : rows) {
    for (const int t : thread_counts({row})) {
      json o = {{"workload", row.workload}, {"figure", row.figure}, {"threads", t}};
      if (!row.shape.empty()) o["shape"] = json::parse(row.shape);
      for (const std::string framework : {"tapegrad", "pytorch"}) {
        std::string setting;
        const double m = median_at(row, framework, t, &setting);
        if (!std::isfinite(m)) continue;
        o[framework + "_median"] = m;
        const std::string key = setting.empty() ? framework : framework + " " + setting;
        o[framework + "_runs"] = row.runs.at(key).at(t).size();
        if (!setting.empty()) o[framework + "_setting"] = setting;
      }
      if (o.contains("tapegrad_median") && o.contains("pytorch_median"))
        o["ratio"] = o["pytorch_median"].get<double>() / o["tapegrad_median"].get<double>();
      all.push_back(std::move(o));
    }
  }
  return all.dump(1) + "\n";
}

std::vector<examples::Series> thread_series(const std::vector<ThreadRow>& rows,
                                            const std::string& workload) {
  std::vector<examples::Series> out;
  const auto row = std::find_if(rows.begin(), rows.end(),
                                [&](const ThreadRow& r) { return r.workload == workload; });
  if (row == rows.end()) return out;
  for (const auto& [framework, name, color] :
       {std::tuple{"tapegrad", "tapegrad", "#d62728"}, {"pytorch", "PyTorch", "#1f77b4"}}) {
    examples::Series s{name, color, {}, {}};
    for (const int threads : thread_counts({*row})) {
      const double m = median_at(*row, framework, threads);
      if (!std::isfinite(m)) continue;
      s.x.push_back(threads);
      s.y.push_back(m);
    }
    if (!s.x.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::vector<ProfileRun> parse_profile_runs(std::istream& in) {
  std::vector<ProfileRun> out;
  for (std::string text; std::getline(in, text);) {
    const json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!line.is_object() || !line.contains("workload") || line["workload"] != "op_profile")
      continue;
    const bool complete = line.contains("of") && line["of"].is_string() && line.contains("op") &&
                          line["op"].is_string() && line.contains("phase") &&
                          line["phase"].is_string() && line.contains("threads") &&
                          line["threads"].is_number_integer() && line.contains("ms_per_step") &&
                          line["ms_per_step"].is_number();
    if (!complete) continue;
    out.push_back({line["of"].get<std::string>(), line["op"].get<std::string>(),
                   line["phase"].get<std::string>(), line["threads"].get<int>(),
                   line["ms_per_step"].get<double>()});
  }
  return out;
}

std::string profile_table(const std::vector<ProfileRun>& runs) {
  std::vector<std::string> workloads;  // in input order
  for (const ProfileRun& r : runs)
    if (std::find(workloads.begin(), workloads.end(), r.of) == workloads.end())
      workloads.push_back(r.of);
  std::string out;
  for (const std::string& of : workloads) {
    // (op, phase) -> threads -> the ms of each run; the medians make the table.
    std::map<std::pair<std::string, std::string>, std::map<int, std::vector<double>>> by_op;
    std::set<int> counts;
    for (const ProfileRun& r : runs) {
      if (r.of != of) continue;
      by_op[{r.op, r.phase}][r.threads].push_back(r.ms);
      counts.insert(r.threads);
    }
    const std::vector<int> threads(counts.begin(), counts.end());
    std::map<int, double> total;
    struct Row {
      std::string name;
      std::map<int, double> ms;
    };
    std::vector<Row> rows;
    for (const auto& [key, at] : by_op) {
      Row row{key.second == "-" ? key.first : key.first + " " + key.second, {}};
      for (const auto& [t, values] : at) {
        row.ms[t] = median(values);
        total[t] += row.ms[t];
      }
      rows.push_back(std::move(row));
    }
    auto ms_at = [](const Row& row, int t) {
      const auto it = row.ms.find(t);
      return it == row.ms.end() ? 0.0 : it->second;
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
      return ms_at(a, threads.front()) > ms_at(b, threads.front());
    });
    // Rows under 1% of every column go into one.
    Row other{"(other ops)", {}};
    std::vector<Row> shown;
    int merged = 0;
    for (Row& row : rows) {
      bool small = row.name != "(outside ops)";
      for (const int t : threads) small = small && ms_at(row, t) < 0.01 * total[t];
      if (!small) {
        shown.push_back(std::move(row));
        continue;
      }
      for (const int t : threads) other.ms[t] += ms_at(row, t);
      ++merged;
    }
    if (merged > 0) {
      other.name = fmt::format("(other ops: {})", merged);
      shown.push_back(std::move(other));
    }
    shown.push_back({"total", total});

    out += fmt::format("\n{}: where the time goes, ms per step (share)\n\n| op |", of);
    std::string rule = "|---|";
    for (const int t : threads) {
      out += fmt::format(" {} thread{} |", t, t == 1 ? "" : "s");
      rule += "---|";
    }
    const bool several = threads.size() > 1;
    if (several) {
      out += fmt::format(" speed-up {} to {} (ideal {:.3g}x) |", threads.front(), threads.back(),
                         double(threads.back()) / double(threads.front()));
      rule += "---|";
    }
    out += "\n" + rule + "\n";
    for (const Row& row : shown) {
      out += "| " + row.name + " |";
      for (const int t : threads) {
        const double ms = ms_at(row, t);
        out += fmt::format(" {} ({:.0f}%) |", number(ms), total[t] > 0 ? 100 * ms / total[t] : 0);
      }
      if (several) {
        const double first = ms_at(row, threads.front()), last = ms_at(row, threads.back());
        out += last > 0 ? fmt::format(" {:.2f}x |", first / last) : std::string(" - |");
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace tg::bench
