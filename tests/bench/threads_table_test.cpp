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
