// bench/scaling_table.h — the lm scaling sweep's numbers: JSON lines in, markdown tables and
// plot series out (bench/scaling.cpp is the program around it; scripts/bench_scaling.sh
// runs the sweep).
//
// The sweep resizes the reference's tiny Transformer LM (4 layers, 4 heads, vocab 128,
// batch 16, SwiGLU width 3 * d_model) along two lines through the reference workload
// (d_model 128, context 128): d_model 64 -> 512 at context 128, and context 64 -> 512 at
// d_model 128. Each run of tapegrad-bench lm or tests/reference/lm_scaling.py prints one
// "tiny_lm_train_step" line with d_model, context and ms_per_step.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include "examples/common/plot.h"

namespace tg::bench {

/// The model size both sweeps pass through: the reference's lm workload.
constexpr int64_t kDefaultDModel = 128;
constexpr int64_t kDefaultContext = 128;
constexpr int64_t kBatch = 16;

/// One timed run: a "tiny_lm_train_step" JSON line.
struct Measurement {
  std::string framework;  ///< "pytorch" or "tapegrad" (the version suffix dropped)
  int64_t d_model = 0;
  int64_t context = 0;
  int64_t params = 0;  ///< 0 if the line has none
  double ms_per_step = 0;
};

/// Reads JSON lines and keeps the lm scaling runs: lines with "workload":
/// "tiny_lm_train_step" and numbers "d_model", "context" and "ms_per_step". Anything else
/// (other workloads, lines that are not JSON objects, blank lines) is skipped, so the
/// files may hold other output too.
std::vector<Measurement> parse_measurements(std::istream& in);

/// The FLOPs of one training step (forward + backward) counted the textbook way, from the
/// matrix multiplies alone (2 FLOPs per multiply-add; norms, softmax, SiLU, AdamW are a few
/// FLOPs per element and left out). With N = 16 * T tokens, d = d_model, f = 3d, H heads of
/// width d / H and vocab V, the forward pass of one layer is
///   QKV 2N*d*3d + output projection 2N*d*d + SwiGLU 3 * 2N*d*f        (= 26 N d^2)
///   + attention scores Q K^T and P V, 2 * 2*16*H*T*T*(d/H)              (= 4 * 16 T^2 d)
/// (the full T x T matrix, as PyTorch's eager code computes it: a causal kernel can skip
/// the upper half), 4 layers, plus the LM head 2N*d*V. Backward multiplies twice as much
/// (one product for the input's gradient, one for the weight's), so the step is 3x the
/// forward pass: 6 * params * tokens for the weight matrices.
double lm_step_flops(int64_t d_model, int64_t context);

/// The part of lm_step_flops that is the attention scores and P V (the T^2 term).
double lm_attention_flops(int64_t d_model, int64_t context);

/// Which line through the reference workload a table or plot shows.
enum class Sweep {
  kDModel,   ///< d_model varies, context 128
  kContext,  ///< context varies, d_model 128
};

/// One row of a sweep: the medians of each framework's runs at one size.
struct ScalingRow {
  int64_t d_model = 0, context = 0;
  int64_t params = 0;  ///< from any run at this size that reports it; 0 if none does
  /// framework ("pytorch", "tapegrad") -> its ms_per_step values, in input order
  std::map<std::string, std::vector<double>> runs;
};

/// The rows of one sweep, ordered by the swept value. Runs off the sweep's line (e.g.
/// d_model 256 with context 256) are ignored; the reference size is in both sweeps.
std::vector<ScalingRow> sweep_rows(const std::vector<Measurement>& measurements, Sweep sweep);

/// Median of a non-empty list (the mean of the middle two for an even count).
double median(std::vector<double> values);

/// "pytorch-1.13.0" -> "pytorch", "tapegrad-0.1.0" -> "tapegrad"; anything else as is.
std::string framework_family(const std::string& framework);

/// A markdown table of one sweep: the swept value, params, GFLOP per step (lm_step_flops),
/// the attention share of those FLOPs, each framework's median ms/step, how many times
/// faster tapegrad is (PyTorch ms / tapegrad ms), each framework's GFLOP/s and the number
/// of runs behind each median. A framework without runs at a size shows "-".
std::string markdown_table(const std::vector<ScalingRow>& rows, Sweep sweep);

/// The curves of one sweep's picture, one series per framework (PyTorch first): x is the
/// swept value; y is the median ms per step for the d_model sweep and the median
/// microseconds per token for the context sweep (see scaling.cpp for why).
std::vector<examples::Series> plot_series(const std::vector<ScalingRow>& rows, Sweep sweep);

/// Writes plot_series as an SVG line plot with title and axis labels for `sweep`.
void write_plot(const std::string& path, const std::vector<ScalingRow>& rows, Sweep sweep);

}  // namespace tg::bench
