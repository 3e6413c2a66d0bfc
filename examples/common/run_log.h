// examples/common/run_log.h — how the example programs report a training run.
//
// One RunLog per run. In the run's output directory it writes
//   metrics.csv   one row per step: step, loss, lr, grad_norm, <eval columns>, elapsed_s
//                 (evaluation rows carry the eval figures; the others leave them empty)
//   loss.svg      the training loss, and the first eval column if it is a loss, per step
// and it tells the person watching, depending on where stdout goes:
//   a terminal    a progress bar redrawn in place: step/total, loss, throughput, ETA
//   a file/pipe   a plain line every `log_every` steps (what CI logs and `tee` keep)
//   --json        stdout carries only JSON: one object per evaluation and a final
//                 summary object; human notes go to stderr
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tg::examples {

struct RunLogOptions {
  std::string out_dir;                         ///< created if missing
  int64_t total_steps = 0;                     ///< for the bar and the ETA
  bool json = false;                           ///< --json: machine-readable stdout
  int64_t log_every = 50;                      ///< plain mode: one line per this many steps
  std::string unit = "samples";                ///< what `items` counts, for the throughput
  std::vector<std::string> eval_columns = {};  ///< e.g. {"val_loss"}; the first one is plotted
  bool force_plain = false;                    ///< never draw the bar (tests)
  /// A resumed run: >= 0 keeps the rows of an existing metrics.csv up to this step (the
  /// checkpoint's) and appends after them; -1 starts a new file.
  int64_t resumed_at_step = -1;
  /// Writes no file and prints nothing (elapsed_s still runs): the ranks other than 0 of a
  /// data-parallel run, for which rank 0 reports.
  bool silent = false;
};

class RunLog {
 public:
  explicit RunLog(RunLogOptions options);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  /// Records optimizer step `step` (1-based), which processed `items` samples or tokens.
  void step(int64_t step, double loss, double lr, double grad_norm, int64_t items);
  /// Records an evaluation after step `step`: one value per eval column, in order.
  void eval(int64_t step, const std::vector<double>& values);
  /// A line for the person watching (stderr in --json mode, so stdout stays JSON).
  void note(const std::string& text);
  /// Ends the run: prints `summary` (one JSON object in --json mode, `key: value` lines
  /// otherwise; seconds and the file paths are added) and writes loss.svg.
  void finish(nlohmann::json summary);

  double elapsed_s() const;
  std::string csv_path() const { return options_.out_dir + "/metrics.csv"; }
  std::string svg_path() const { return options_.out_dir + "/loss.svg"; }

 private:
  void write_row(int64_t step, double loss, double lr, double grad_norm,
                 const std::vector<double>* evals);
  void draw_bar(int64_t step, double loss);
  void end_bar();
  void keep_rows_up_to(int64_t step, const std::string& header);
  void start_csv(const std::string& rows);

  RunLogOptions options_;
  std::FILE* csv_ = nullptr;
  bool bar_ = false;       // drawing a progress bar (stdout is a terminal, not --json)
  bool bar_open_ = false;  // the cursor sits at the end of a bar line
  std::chrono::steady_clock::time_point start_, last_draw_;
  double elapsed_before_ = 0;  // seconds of the run(s) this one resumes
  int64_t items_ = 0;
  double last_loss_ = 0, last_lr_ = 0, last_grad_norm_ = 0;
  int64_t last_step_ = 0;
  std::vector<double> loss_steps_, losses_, eval_steps_, eval_values_;
};

/// "1h02m", "3m07s", "12s": a duration for people.
std::string format_duration(double seconds);

}  // namespace tg::examples
