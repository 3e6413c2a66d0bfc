// bench/scaling_table.cpp — see scaling_table.h.
#include "bench/scaling_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace tg::bench {
namespace {

using nlohmann::json;

constexpr int64_t kLayers = 4, kVocab = 128;

/// The FLOPs of one forward pass, split into the weight matrices' part and attention's.
struct ForwardFlops {
  double weights = 0, attention = 0;
};

ForwardFlops forward_flops(int64_t d_model, int64_t context) {
  const double d = static_cast<double>(d_model), f = 3 * d, T = static_cast<double>(context);
  const double n = static_cast<double>(kBatch) * T;  // tokens in a step
  // Per layer: QKV, output projection, and the SwiGLU's three matrices, 2 FLOPs per
  // multiply-add of an (n x in) by (in x out) product.
  const double layer_weights = 2 * n * d * (3 * d) + 2 * n * d * d + 3 * (2 * n * d * f);
  // Per layer: S = Q K^T and P V, each 2 * T * T * head_dim per (sequence, head); the heads
  // together have head_dim * H = d.
  const double layer_attention = 2 * (2 * static_cast<double>(kBatch) * T * T * d);
  const double head = 2 * n * d * static_cast<double>(kVocab);
  return {kLayers * layer_weights + head, kLayers * layer_attention};
}

bool on_sweep(const Measurement& m, Sweep sweep) {
  return sweep == Sweep::kDModel ? m.context == kDefaultContext : m.d_model == kDefaultDModel;
}

int64_t swept_value(const ScalingRow& row, Sweep sweep) {
  return sweep == Sweep::kDModel ? row.d_model : row.context;
}

/// The median ms/step of `framework` in `row`, or NaN without runs.
double median_ms(const ScalingRow& row, const std::string& framework) {
  const auto it = row.runs.find(framework);
  if (it == row.runs.end() || it->second.empty()) return std::nan("");
  return median(it->second);
}

std::string cell(double value, const char* format) {
  return std::isfinite(value) ? fmt::format(fmt::runtime(format), value) : "-";
}

size_t run_count(const ScalingRow& row, const std::string& framework) {
  const auto it = row.runs.find(framework);
  return it == row.runs.end() ? 0 : it->second.size();
}

}  // namespace

std::vector<Measurement> parse_measurements(std::istream& in) {
  std::vector<Measurement> out;
  std::string text;
  while (std::getline(in, text)) {
    const json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    // JSON comparisons and type checks, not line.value(key, default), which throws nlohmann's
    // own type_error where the field has another type: a line of the wrong shape is skipped.
    if (!line.is_object() || !line.contains("workload") || line["workload"] != "tiny_lm_train_step")
      continue;
    const auto number = [&](const char* key) {
      return line.contains(key) && line[key].is_number();
    };
    if (!number("d_model") || !number("context") || !number("ms_per_step")) continue;
    const bool named = line.contains("framework") && line["framework"].is_string();
    out.push_back({.framework = framework_family(named ? line["framework"].get<std::string>() : ""),
                   .d_model = line["d_model"].get<int64_t>(),
                   .context = line["context"].get<int64_t>(),
                   .params = number("params") ? line["params"].get<int64_t>() : 0,
                   .ms_per_step = line["ms_per_step"].get<double>()});
  }
  return out;
}

double lm_step_flops(int64_t d_model, int64_t context) {
  const ForwardFlops f = forward_flops(d_model, context);
  return 3 * (f.weights + f.attention);  // forward + a backward twice as large
}

double lm_attention_flops(int64_t d_model, int64_t context) {
  return 3 * forward_flops(d_model, context).attention;
}

std::vector<ScalingRow> sweep_rows(const std::vector<Measurement>& measurements, Sweep sweep) {
  std::map<int64_t, ScalingRow> by_value;
  for (const Measurement& m : measurements) {
    if (!on_sweep(m, sweep)) continue;
    ScalingRow& row = by_value[sweep == Sweep::kDModel ? m.d_model : m.context];
    row.d_model = m.d_model, row.context = m.context;
    if (m.params > 0) row.params = m.params;
    row.runs[m.framework].push_back(m.ms_per_step);
  }
  std::vector<ScalingRow> rows;
  for (auto& [value, row] : by_value) rows.push_back(std::move(row));
  return rows;
}

std::string framework_family(const std::string& framework) {
  for (const char* name : {"pytorch", "tapegrad"}) {
    if (framework.rfind(name, 0) == 0) return name;
  }
  return framework;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string markdown_table(const std::vector<ScalingRow>& rows, Sweep sweep) {
  std::string out = fmt::format(
      "| {} | params | GFLOP/step | attention | PyTorch ms/step | tapegrad ms/step | "
      "tapegrad faster by | PyTorch GFLOP/s | tapegrad GFLOP/s | runs |\n",
      sweep == Sweep::kDModel ? "d_model" : "context");
  out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const ScalingRow& row : rows) {
    const double flops = lm_step_flops(row.d_model, row.context);
    const double torch_ms = median_ms(row, "pytorch"), ours_ms = median_ms(row, "tapegrad");
    // GFLOP/s = FLOPs / (ms * 1e-3) / 1e9 = FLOPs / ms / 1e6.
    out += fmt::format("| {} | {} | {:.2f} | {:.0f}% | {} | {} | {} | {} | {} | {} / {} |\n",
                       swept_value(row, sweep), row.params > 0 ? std::to_string(row.params) : "-",
                       flops / 1e9, 100 * lm_attention_flops(row.d_model, row.context) / flops,
                       cell(torch_ms, "{:.1f}"), cell(ours_ms, "{:.1f}"),
                       cell(torch_ms / ours_ms, "{:.2f}x"), cell(flops / torch_ms / 1e6, "{:.1f}"),
                       cell(flops / ours_ms / 1e6, "{:.1f}"), run_count(row, "pytorch"),
                       run_count(row, "tapegrad"));
  }
  return out;
}

std::vector<examples::Series> plot_series(const std::vector<ScalingRow>& rows, Sweep sweep) {
  std::vector<examples::Series> series = {
      {.name = "PyTorch", .color = "#d62728", .x = {}, .y = {}},
      {.name = "tapegrad", .color = "#1f77b4", .x = {}, .y = {}}};
  for (examples::Series& s : series) {
    const std::string framework = s.name == "PyTorch" ? "pytorch" : "tapegrad";
    for (const ScalingRow& row : rows) {
      const double ms = median_ms(row, framework);
      if (!std::isfinite(ms)) continue;
      const double tokens = static_cast<double>(kBatch * row.context);
      s.x.push_back(static_cast<double>(swept_value(row, sweep)));
      s.y.push_back(sweep == Sweep::kDModel ? ms : ms * 1e3 / tokens);
    }
  }
  return series;
}

void write_plot(const std::string& path, const std::vector<ScalingRow>& rows, Sweep sweep) {
  if (sweep == Sweep::kDModel) {
    examples::write_line_plot(path, "lm train step vs d_model (context 128, batch 16)", "d_model",
                              "ms per step", plot_series(rows, sweep));
  } else {
    examples::write_line_plot(path, "lm train step vs context (d_model 128, batch 16)",
                              "context length T", "microseconds per token",
                              plot_series(rows, sweep));
  }
}

}  // namespace tg::bench
