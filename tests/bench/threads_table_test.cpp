// tests/bench/threads_table_test.cpp — the thread sweep's parsing, medians and table
// (bench/threads_table.h).
#include "bench/threads_table.h"

#include <sstream>

#include "test_util.h"

namespace {

using tg::bench::ThreadRun;

std::vector<ThreadRun> parse(const std::string& text) {
  std::istringstream in(text);
  return tg::bench::parse_thread_runs(in);
}

const char* kLines = R"(
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 1, "ms_per_step": 100}
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 1, "ms_per_step": 120}
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 1, "ms_per_step": 110}
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 2, "ms_per_step": 60}
{"workload": "tiny_lm_train_step", "framework": "pytorch-2.1.0", "threads": 1, "ms_per_step": 220}
{"workload": "tiny_lm_train_step", "framework": "pytorch-2.1.0", "threads": 2, "ms_per_step": 150}
{"workload": "tiny_lm_train_step", "framework": "pytorch-2.1.0", "threads": 2, "ms_per_step": 1, "best": true}
{"workload": "linear_fwd_bwd", "framework": "pytorch-2.1.0", "blas_threads": "2", "shape": [128, 784, 256], "ms": 0.5}
{"workload": "linear_fwd_bwd", "framework": "pytorch-2.1.0", "blas_threads": "default", "shape": [128, 784, 256], "ms": 0.1}
{"workload": "linear_fwd_bwd", "framework": "tapegrad-0.1.0", "threads": 2, "shape": [128,784,256], "ms": 0.4}
{"workload": "sgemm", "framework": "tapegrad-0.1.0", "threads": 2, "gflops": 9}
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 4}
not json at all
)";

TEST(ThreadsTableTest, KeepsTheFiguresOfKnownWorkloadsOnly) {
  const auto runs = parse(kLines);
  // sgemm is no sweep workload, the "best" line repeats a run, one line lacks its figure,
  // one has no thread count (blas_threads "default"); PyTorch's ops lines count by
  // blas_threads.
  ASSERT_EQ(runs.size(), 8u);
  EXPECT_EQ(runs[0].framework, "tapegrad");
  EXPECT_EQ(runs[4].framework, "pytorch");
  EXPECT_EQ(runs[6].shape, "[128,784,256]");  // the same text whatever the spacing
  EXPECT_EQ(runs[6].shape, runs[7].shape);
}

TEST(ThreadsTableTest, RowsHoldMediansPerFrameworkAndThreadCount) {
  const auto rows = tg::bench::thread_rows(parse(kLines));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].workload, "tiny_lm_train_step");
  EXPECT_EQ(rows[1].workload, "linear_fwd_bwd");
  EXPECT_EQ(tg::bench::median_at(rows[0], "tapegrad", 1), 110);
  EXPECT_EQ(tg::bench::median_at(rows[0], "pytorch", 2), 150);
  EXPECT_TRUE(std::isnan(tg::bench::median_at(rows[1], "tapegrad", 1)));
  EXPECT_EQ(tg::bench::thread_counts(rows), (std::vector<int>{1, 2}));
}

TEST(ThreadsTableTest, TheTableShowsRatiosBestAndEfficiency) {
  const std::string md = tg::bench::thread_table(tg::bench::thread_rows(parse(kLines)));
  EXPECT_THAT(md,
              ::testing::HasSubstr("| workload (figure) | 1 thread | 2 threads | PyTorch best |"));
  // 220 / 110 = 2x at 1 thread, 150 / 60 = 2.5x at 2; PyTorch's best is 150 ms at 2 threads.
  EXPECT_THAT(md, ::testing::HasSubstr(
                      "| tiny_lm_train_step (ms_per_step) | 110 / 220 (2.00x) | 60.0 / 150 (2.50x) "
                      "| 150 at 2 |"));
  EXPECT_THAT(md, ::testing::HasSubstr(
                      "| linear_fwd_bwd [128,784,256] (ms) | - / - | 0.4 / 0.5 (1.25x) |"));
  // tapegrad's own scaling: 110 / 60 = 1.83x on 2 threads, 92% efficiency.
  EXPECT_THAT(
      md, ::testing::HasSubstr("| tiny_lm_train_step (ms_per_step) | 1.00x, 100% | 1.83x, 92% |"));
}

TEST(ThreadsTableTest, JsonAndPlotSeriesCarryTheMedians) {
  const auto rows = tg::bench::thread_rows(parse(kLines));
  const std::string json = tg::bench::thread_json(rows);
  EXPECT_THAT(json, ::testing::HasSubstr("\"ratio\": 2.5"));
  EXPECT_THAT(json, ::testing::HasSubstr("\"tapegrad_runs\": 3"));
  const auto series = tg::bench::thread_series(rows, "tiny_lm_train_step");
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].x, (std::vector<double>{1, 2}));
  EXPECT_EQ(series[0].y, (std::vector<double>{110, 60}));
  EXPECT_TRUE(tg::bench::thread_series(rows, "mlp_fashion_mnist_epoch").empty());
}

}  // namespace

namespace {

std::vector<tg::bench::ProfileRun> parse_profile(const std::string& text) {
  std::istringstream in(text);
  return tg::bench::parse_profile_runs(in);
}

// Two runs at 1 thread (medians 30 and 10 for linear), one at 4. "tiny" is 0.5% of both
// totals, so it is merged; "(outside ops)" always stays.
const char* kProfile = R"lines(
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "linear", "phase": "backward", "threads": 1, "ms_per_step": 28}
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "linear", "phase": "backward", "threads": 1, "ms_per_step": 32}
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "adamw", "phase": "step", "threads": 1, "ms_per_step": 9.6}
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "tiny", "phase": "forward", "threads": 1, "ms_per_step": 0.2}
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "(outside ops)", "phase": "-", "threads": 1, "ms_per_step": 0.2}
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "linear", "phase": "backward", "threads": 4, "ms_per_step": 10}
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "adamw", "phase": "step", "threads": 4, "ms_per_step": 9.9}
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "tiny", "phase": "forward", "threads": 4, "ms_per_step": 0.1}
{"workload": "op_profile", "of": "tiny_lm_train_step", "op": "linear", "phase": "forward", "threads": 4}
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 1, "ms_per_step": 100}
)lines";

// A result file is whatever the user points the sweep at: a line whose fields have other
// types is skipped (or read where the field is optional), never an exception from the JSON
// library that would end the program.
TEST(ThreadsTableTest, FieldsOfAnotherTypeAreSkippedNotThrown) {
  const auto runs = parse(R"(
{"workload": 5, "framework": "tapegrad-0.1.0", "threads": 1, "ms_per_step": 1}
{"workload": "tiny_lm_train_step", "framework": ["tapegrad"], "threads": 1, "ms_per_step": 2}
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 1, "ms_per_step": "3"}
{"workload": "linear_fwd_bwd", "framework": "pytorch-2.1.0", "blas_threads": "99999999999", "ms": 4}
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 1, "ms_per_step": 5, "best": "yes"}
)");
  ASSERT_EQ(runs.size(), 1u);  // only the last: its "best" is not true
  EXPECT_EQ(runs[0].value, 5);
  const char* profile_line = R"(
{"workload": ["op_profile"], "of": "x", "op": "y", "phase": "z", "threads": 1, "ms_per_step": 1}
)";
  EXPECT_TRUE(parse_profile(profile_line).empty());
}

TEST(ThreadsTableTest, ProfileLinesAreReadAndOthersSkipped) {
  const auto runs = parse_profile(kProfile);
  ASSERT_EQ(runs.size(), 8u);  // the line without ms_per_step and the lm line are skipped
  EXPECT_EQ(runs[0].of, "tiny_lm_train_step");
  EXPECT_EQ(runs[0].op, "linear");
  EXPECT_EQ(runs[0].phase, "backward");
  EXPECT_EQ(runs[0].threads, 1);
  EXPECT_EQ(runs[0].ms, 28);
}

TEST(ThreadsTableTest, TheProfileTableShowsSharesAndSpeedUps) {
  const std::string md = tg::bench::profile_table(parse_profile(kProfile));
  EXPECT_THAT(md, ::testing::HasSubstr("tiny_lm_train_step: where the time goes"));
  EXPECT_THAT(md,
              ::testing::HasSubstr("| op | 1 thread | 4 threads | speed-up 1 to 4 (ideal 4x) |"));
  // Medians: linear 30 ms at 1 thread (of 40 in all: 75%), 10 at 4 (of 20: 50%), 3x faster.
  EXPECT_THAT(md, ::testing::HasSubstr("| linear backward | 30.0 (75%) | 10.0 (50%) | 3.00x |"));
  // The optimizer does not scale at all.
  EXPECT_THAT(md, ::testing::HasSubstr("| adamw step | 9.6 (24%) | 9.9 (50%) | 0.97x |"));
  EXPECT_THAT(md, ::testing::HasSubstr("| (other ops: 1) | 0.2 (0%) | 0.1 (0%) | 2.00x |"));
  EXPECT_THAT(md, ::testing::HasSubstr("| (outside ops) | 0.2 (0%) | 0 (0%) | - |"));
  EXPECT_THAT(md, ::testing::HasSubstr("| total | 40.0 (100%) | 20.0 (100%) | 2.00x |"));
  // Rows in order of time at the fewest threads.
  EXPECT_LT(md.find("linear backward"), md.find("adamw step"));
  EXPECT_TRUE(tg::bench::profile_table({}).empty());
}

}  // namespace

TEST(ThreadsTableTest, PeakMemoryLinesBecomeRowsOfTheirWorkload) {
  const auto rows = tg::bench::thread_rows(parse(R"lines(
{"workload": "peak_rss", "of": "tiny_lm_train_step", "framework": "tapegrad", "threads": 1, "max_rss_kb": 100000}
{"workload": "peak_rss", "of": "tiny_lm_train_step", "framework": "pytorch", "threads": 1, "max_rss_kb": 400000}
{"workload": "peak_rss", "of": "mlp_fashion_mnist_epoch", "framework": "tapegrad", "threads": 1, "max_rss_kb": 50000}
)lines"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(tg::bench::median_at(rows[0], "pytorch", 1), 400000);
  const std::string md = tg::bench::thread_table(rows);
  EXPECT_THAT(md, ::testing::HasSubstr(
                      "| peak_rss tiny_lm_train_step (max_rss_kb) | 100000 / 400000 (4.00x) |"));
  EXPECT_THAT(md, ::testing::HasSubstr("| peak_rss mlp_fashion_mnist_epoch (max_rss_kb) |"));
  // The JSON keeps the workload it measured.
  EXPECT_THAT(tg::bench::thread_json(rows), ::testing::HasSubstr("\"tiny_lm_train_step\""));
}

TEST(ThreadsTableTest, PyTorchCountsAtItsFastestSettingForEachThreadCount) {
  // At 2 threads: 2/2 oversubscribes (250 ms), 1/2 is the fastest (80), 2/1 between (100);
  // an ops line names only its BLAS threads, and the sweep's tag says which count it is for.
  const auto rows = tg::bench::thread_rows(parse(R"lines(
{"workload": "tiny_lm_train_step", "framework": "tapegrad-0.1.0", "threads": 2, "ms_per_step": 40}
{"workload": "tiny_lm_train_step", "framework": "pytorch-1.13", "threads": 2, "ms_per_step": 250, "sweep_threads": 2, "setting": "2/2"}
{"workload": "tiny_lm_train_step", "framework": "pytorch-1.13", "threads": 1, "ms_per_step": 80, "sweep_threads": 2, "setting": "1/2"}
{"workload": "tiny_lm_train_step", "framework": "pytorch-1.13", "threads": 1, "ms_per_step": 90, "sweep_threads": 2, "setting": "1/2"}
{"workload": "tiny_lm_train_step", "framework": "pytorch-1.13", "threads": 2, "ms_per_step": 100, "sweep_threads": 2, "setting": "2/1"}
{"workload": "tiny_lm_train_step", "framework": "pytorch-1.13", "threads": 1, "ms_per_step": 110, "sweep_threads": 1, "setting": "1/1"}
{"workload": "rmsnorm_fwd_bwd", "framework": "pytorch-1.13", "blas_threads": "1", "shape": [8, 8], "ms": 3, "sweep_threads": 2, "setting": "2/1"}
)lines"));
  ASSERT_EQ(rows.size(), 2u);
  std::string setting;
  EXPECT_EQ(tg::bench::median_at(rows[0], "pytorch", 2, &setting), 85);  // median of 80, 90
  EXPECT_EQ(setting, "1/2");
  EXPECT_EQ(tg::bench::median_at(rows[0], "pytorch", 1), 110);
  EXPECT_EQ(tg::bench::median_at(rows[1], "pytorch", 2), 3);  // the tag, not blas_threads
  EXPECT_TRUE(std::isnan(tg::bench::median_at(rows[1], "pytorch", 1)));
  const std::string md = tg::bench::thread_table(rows);
  EXPECT_THAT(md, ::testing::HasSubstr(
                      "| tiny_lm_train_step (ms_per_step) | - / 110 [1/1] | 40.0 / 85.0 [1/2] "
                      "(2.12x) | 85.0 at 2 |"));
  EXPECT_THAT(tg::bench::thread_json(rows), ::testing::HasSubstr("\"pytorch_setting\": \"1/2\""));
  const auto series = tg::bench::thread_series(rows, "tiny_lm_train_step");
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[1].y, (std::vector<double>{110, 85}));
}
