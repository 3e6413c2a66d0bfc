// bench/threads_table.h — the thread sweep's numbers: JSON lines of tapegrad-bench and
// torch_reference.py at 1, 2, 4, ... threads in, a markdown table, a JSON summary and plot
// series out (bench/threads.cpp is the program around it; scripts/bench_threads.sh runs the
// sweep).
#pragma once

#include <istream>
#include <map>
#include <string>
#include <vector>

#include "examples/common/plot.h"

namespace tg::bench {

/// One figure of one run: a JSON line of a workload the sweep knows.
struct ThreadRun {
  std::string workload;   ///< "tiny_lm_train_step", "linear_fwd_bwd", ...
  std::string shape;      ///< the line's "shape" as JSON text ("[128,784,256]"), or ""
  std::string framework;  ///< "tapegrad" or "pytorch" (the version suffix dropped)
  int threads = 0;
  double value = 0;     ///< the workload's figure (ms, seconds or us, lower is better)
  std::string setting;  ///< PyTorch's thread setting "T/B" (intra-op/OpenBLAS), if tagged
};

/// The figure each workload is judged by: ms_per_step for the lm, seconds for an mlp
/// epoch, ms for the ops, us_per_op for the overhead, and max_rss_kb for the peak_rss lines
/// that bench_threads.sh writes with GNU time around the lm and mlp runs ("of" names the
/// run, and stands in the row's shape). Lower is better for all of them.
const std::map<std::string, std::string>& thread_figures();

/// Reads JSON lines and keeps those of known workloads that carry "framework", "threads"
/// (or, as torch_reference.py's ops lines do, only "blas_threads") and the workload's figure;
/// anything else (other output, PyTorch's "best" summary lines, blank lines) is skipped.
/// bench_threads.sh tags each PyTorch line with "sweep_threads" (the thread count it ran
/// for, which wins) and "setting" (see median_at).
std::vector<ThreadRun> parse_thread_runs(std::istream& in);

/// One workload at one shape: framework -> threads -> its values, in input order. PyTorch's
/// runs at each of its thread settings are kept apart, as "pytorch T/B".
struct ThreadRow {
  std::string workload, shape, figure;
  std::map<std::string, std::map<int, std::vector<double>>> runs;
};

/// The rows, in the order of thread_figures()'s workloads, then by shape.
std::vector<ThreadRow> thread_rows(const std::vector<ThreadRun>& runs);

/// The thread counts any row has, ascending.
std::vector<int> thread_counts(const std::vector<ThreadRow>& rows);

/// The median of one framework at one thread count, or NaN when it has no run there. Where
/// PyTorch ran at several settings for T cores (T intra-op threads with T OpenBLAS threads,
/// 1 with T, T with 1: which is fastest depends on the machine, and T with T can
/// oversubscribe the cores), the fastest setting's median counts, and `setting` (if given)
/// is set to it ("" for an untagged framework).
double median_at(const ThreadRow& row, const std::string& framework, int threads,
                 std::string* setting = nullptr);

/// A markdown table: a row per workload and shape, a column per thread count holding
/// "tapegrad / PyTorch (ratio)" medians, where the ratio is PyTorch / tapegrad (above 1:
/// tapegrad is faster), and PyTorch's best over all thread counts; then, for the lm and mlp,
/// tapegrad's speed-up over 1 thread and its parallel efficiency (speed-up / threads).
std::string thread_table(const std::vector<ThreadRow>& rows);

/// The same numbers as JSON: one object per (workload, shape, threads).
std::string thread_json(const std::vector<ThreadRow>& rows);

/// Time against threads of one workload (its first shape), a series per framework.
std::vector<examples::Series> thread_series(const std::vector<ThreadRow>& rows,
                                            const std::string& workload);

/// One "op_profile" line of `tapegrad-bench lm|mlp --profile`: the time per step that one op
/// (in one phase) took in the workload `of`, at some thread count.
struct ProfileRun {
  std::string of;     ///< "tiny_lm_train_step" or "mlp_fashion_mnist_epoch"
  std::string op;     ///< "linear", "adamw", "(outside ops)", ...
  std::string phase;  ///< "forward", "backward", "step", "zero_grad" or "-"
  int threads = 0;
  double ms = 0;  ///< ms per step (per epoch, for the mlp)
};

/// Reads JSON lines and keeps the op_profile ones; anything else is skipped.
std::vector<ProfileRun> parse_profile_runs(std::istream& in);

/// Where the time goes as threads are added: per workload, a row per op and phase with its
/// median ms at each thread count and its share of that column's total, then its speed-up
/// from the fewest threads to the most (the ideal is the ratio of the thread counts). Rows
/// come in order of time at the fewest threads; those under 1% of every column are summed
/// into "(other ops)". Empty when there are no runs.
std::string profile_table(const std::vector<ProfileRun>& runs);

}  // namespace tg::bench
