// examples/common/run_log.cpp — see run_log.h.
#include "examples/common/run_log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/error.h"
#include "examples/common/plot.h"

namespace tg::examples {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// A CSV cell: empty for "no value" (NaN), else the shortest text that reads back exactly.
std::string cell(double v) { return std::isnan(v) ? "" : fmt::format("{}", v); }

/// A cell of metrics.csv back to a number: NaN for an empty or unreadable cell.
double number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return text.empty() || *end != '\0' ? std::nan("") : v;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<int64_t>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

RunLog::RunLog(RunLogOptions options) : options_(std::move(options)) {
  TG_CHECK(!options_.out_dir.empty(), ValueError, "RunLog: out_dir must not be empty");
  start_ = last_draw_ = Clock::now();
  if (options_.silent) return;
  std::error_code ec;
  std::filesystem::create_directories(options_.out_dir, ec);
  TG_CHECK(!ec, Error, "RunLog: cannot create '{}': {}", options_.out_dir, ec.message());
  std::string header = "step,loss,lr,grad_norm";
  for (const std::string& c : options_.eval_columns) header += "," + c;
  header += ",elapsed_s\n";
  if (options_.resumed_at_step >= 0) {
    keep_rows_up_to(options_.resumed_at_step, header);
  } else {
    start_csv(header);
  }
  bar_ = !options_.json && !options_.force_plain && isatty(STDOUT_FILENO) != 0;
  start_ = last_draw_ = Clock::now();
}

// A resumed run continues the metrics of the run it resumes: rows up to the checkpoint's
// step are kept (a run killed after its last checkpoint wrote rows past it, which the
// resumed run is about to write again), their losses go back into the loss curve, and
// elapsed_s carries on from the last kept row.
void RunLog::keep_rows_up_to(int64_t step, const std::string& header) {
  std::string kept = header;
  if (std::FILE* old = std::fopen(csv_path().c_str(), "r")) {
    char line[4096];
    bool first = true;
    while (std::fgets(line, sizeof line, old) != nullptr) {
      const std::string row = line;
      if (first) {  // another run's columns: keep nothing
        first = false;
        if (row != header) break;
        continue;
      }
      std::vector<std::string> cells;
      for (size_t begin = 0;;) {
        const size_t comma = row.find(',', begin);
        cells.push_back(row.substr(begin, comma == std::string::npos ? comma : comma - begin));
        if (comma == std::string::npos) break;
        begin = comma + 1;
      }
      if (cells.size() != 5 + options_.eval_columns.size()) continue;  // a torn last line
      const double row_step = number(cells[0]);
      if (!(row_step >= 1 && row_step <= static_cast<double>(step))) continue;
      kept += row;
      if (!std::isnan(number(cells[1]))) {  // an eval row has no loss
        loss_steps_.push_back(row_step);
        losses_.push_back(number(cells[1]));
      }
      if (!options_.eval_columns.empty() && !std::isnan(number(cells[4]))) {
        eval_steps_.push_back(row_step);
        eval_values_.push_back(number(cells[4]));
      }
      const double elapsed = number(cells.back().substr(0, cells.back().find('\n')));
      if (!std::isnan(elapsed)) elapsed_before_ = elapsed;
    }
    std::fclose(old);
  }
  start_csv(kept);
}

// The file is replaced, never rewritten in place: a kill at any moment leaves the old rows
// or the new ones (core/atomic_file.h). Rows are then appended as the run goes.
void RunLog::start_csv(const std::string& rows) {
  write_file_atomically(csv_path(), rows, "RunLog");
  csv_ = std::fopen(csv_path().c_str(), "a");
  TG_CHECK(csv_ != nullptr, Error, "RunLog: cannot append to '{}'", csv_path());
}

RunLog::~RunLog() {
  end_bar();
  if (csv_ != nullptr) std::fclose(csv_);
}

double RunLog::elapsed_s() const { return seconds_between(start_, Clock::now()); }

void RunLog::write_row(int64_t step, double loss, double lr, double grad_norm,
                       const std::vector<double>* evals) {
  std::string row = fmt::format("{},{},{},{}", step, cell(loss), cell(lr), cell(grad_norm));
  for (size_t i = 0; i < options_.eval_columns.size(); ++i) {
    row += "," + (evals != nullptr ? cell((*evals)[i]) : std::string());
  }
  row += fmt::format(",{:.3f}\n", elapsed_before_ + elapsed_s());
  std::fputs(row.c_str(), csv_);
  std::fflush(csv_);  // a killed run keeps every row written so far
}

void RunLog::step(int64_t step, double loss, double lr, double grad_norm, int64_t items) {
  if (options_.silent) return;
  items_ += items;
  last_step_ = step, last_loss_ = loss, last_lr_ = lr, last_grad_norm_ = grad_norm;
  loss_steps_.push_back(static_cast<double>(step));
  losses_.push_back(loss);
  write_row(step, loss, lr, grad_norm, nullptr);
  if (bar_) {
    // Redraw at most ten times a second, and always on the last step.
    const auto now = Clock::now();
    if (seconds_between(last_draw_, now) >= 0.1 || step == options_.total_steps) {
      last_draw_ = now;
      draw_bar(step, loss);
    }
  } else if (!options_.json && options_.log_every > 0 && step % options_.log_every == 0) {
    const double t = elapsed_s();
    std::printf("step %lld/%lld  loss %.4f  lr %.3g  grad_norm %.3f  %.0f %s/s  %s\n",
                static_cast<long long>(step), static_cast<long long>(options_.total_steps), loss,
                lr, grad_norm, t > 0 ? static_cast<double>(items_) / t : 0.0, options_.unit.c_str(),
                format_duration(t).c_str());
    std::fflush(stdout);
  }
}

void RunLog::draw_bar(int64_t step, double loss) {
  const double t = elapsed_s();
  const double frac = options_.total_steps > 0
                          ? std::clamp(double(step) / double(options_.total_steps), 0.0, 1.0)
                          : 0.0;
  constexpr int kCells = 24;
  const int filled = static_cast<int>(frac * kCells);
  const double eta = frac > 0 ? t * (1 - frac) / frac : NAN;
  std::printf("\r[%s%s] %lld/%lld  loss %.4f  %.0f %s/s  ETA %s   ",
              std::string(static_cast<size_t>(filled), '#').c_str(),
              std::string(static_cast<size_t>(kCells - filled), '.').c_str(),
              static_cast<long long>(step), static_cast<long long>(options_.total_steps), loss,
              t > 0 ? static_cast<double>(items_) / t : 0.0, options_.unit.c_str(),
              format_duration(eta).c_str());
  std::fflush(stdout);
  bar_open_ = true;
}

void RunLog::end_bar() {
  if (!bar_open_) return;
  std::printf("\n");
  std::fflush(stdout);
  bar_open_ = false;
}

void RunLog::eval(int64_t step, const std::vector<double>& values) {
  if (options_.silent) return;
  TG_CHECK(values.size() == options_.eval_columns.size(), ValueError,
           "RunLog::eval: {} values for {} eval columns", values.size(),
           options_.eval_columns.size());
  write_row(step, NAN, NAN, NAN, &values);
  if (!values.empty()) {
    eval_steps_.push_back(static_cast<double>(step));
    eval_values_.push_back(values[0]);
  }
  if (options_.json) {
    nlohmann::json line = {{"event", "eval"}, {"step", step}, {"elapsed_s", elapsed_s()}};
    if (last_step_ > 0) line["train_loss"] = last_loss_;
    for (size_t i = 0; i < values.size(); ++i) line[options_.eval_columns[i]] = values[i];
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
    return;
  }
  end_bar();
  std::string text = fmt::format("eval at step {}:", step);
  for (size_t i = 0; i < values.size(); ++i) {
    text += fmt::format("  {} {:.4f}", options_.eval_columns[i], values[i]);
  }
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

void RunLog::note(const std::string& text) {
  if (options_.silent) return;
  if (options_.json) {
    std::fprintf(stderr, "%s\n", text.c_str());
    return;
  }
  end_bar();
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

void RunLog::finish(nlohmann::json summary) {
  if (options_.silent) return;
  end_bar();
  summary["seconds"] = std::round(elapsed_s() * 1000) / 1000;
  summary["metrics_csv"] = csv_path();
  summary["loss_curve"] = svg_path();
  std::vector<Series> series = {{"train loss", "#1f77b4", loss_steps_, losses_, false}};
  if (!eval_steps_.empty() && options_.eval_columns[0].find("loss") != std::string::npos) {
    series.push_back({options_.eval_columns[0], "#d62728", eval_steps_, eval_values_, true});
  }
  write_line_plot(svg_path(), "training loss", "step", "loss", series);
  if (options_.json) {
    summary["event"] = "summary";
    std::printf("%s\n", summary.dump().c_str());
  } else {
    for (const auto& [key, value] : summary.items()) {
      std::printf("%s: %s\n", key.c_str(),
                  value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
    }
  }
  std::fflush(stdout);
}

}  // namespace tg::examples
