// tests/bench/scaling_table_test.cpp — the lm scaling sweep's parsing, FLOP count, tables
// and plot series (bench/scaling_table.h) on hand-written JSON lines. Nothing is timed.
#include "bench/scaling_table.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace tg::bench {
namespace {

// What scripts/bench_scaling.sh collects, plus lines the parser must skip. The ms values
// are round numbers, so the table below can be checked by hand.
constexpr const char* kLines = R"(not json at all
{"workload": "tiny_op_overhead", "us_per_op": 4.4, "framework": "pytorch-1.13.0a0"}
{"workload": "tiny_lm_train_step", "ms_per_step": 149.0, "framework": "pytorch-1.13.0a0"}
{"workload": "tiny_lm_train_step", "d_model": 64, "context": 128, "params": 229952, "ms_per_step": 40.0, "framework": "pytorch-1.13.0a0", "blas_threads": "2"}
{"workload": "tiny_lm_train_step", "d_model": 64, "context": 128, "params": 229952, "ms_per_step": 10.0, "framework": "tapegrad-0.1.0", "threads": 2}

{"workload": "tiny_lm_train_step", "d_model": 128, "context": 128, "params": 819328, "ms_per_step": 160.0, "framework": "pytorch-1.13.0a0"}
{"workload": "tiny_lm_train_step", "d_model": 128, "context": 128, "params": 819328, "ms_per_step": 150.0, "framework": "pytorch-1.13.0a0"}
{"workload": "tiny_lm_train_step", "d_model": 128, "context": 128, "params": 819328, "ms_per_step": 149.0, "framework": "pytorch-1.13.0a0"}
{"workload": "tiny_lm_train_step", "d_model": 128, "context": 128, "params": 819328, "ms_per_step": 60.0, "framework": "tapegrad-0.1.0"}
{"workload": "tiny_lm_train_step", "d_model": 128, "context": 128, "params": 819328, "ms_per_step": 50.0, "framework": "tapegrad-0.1.0"}
{"workload": "tiny_lm_train_step", "d_model": 256, "context": 128, "params": 3212416, "ms_per_step": 500.0, "framework": "pytorch-1.13.0a0"}
{"workload": "tiny_lm_train_step", "d_model": 128, "context": 64, "params": 819328, "ms_per_step": 60.0, "framework": "pytorch-1.13.0a0"}
{"workload": "tiny_lm_train_step", "d_model": 128, "context": 64, "params": 819328, "ms_per_step": 20.0, "framework": "tapegrad-0.1.0"}
{"workload": "tiny_lm_train_step", "d_model": 256, "context": 256, "ms_per_step": 1.0, "framework": "tapegrad-0.1.0"}
)";

std::vector<Measurement> measurements() {
  std::istringstream in(kLines);
  return parse_measurements(in);
}

TEST(ScalingTableTest, ParsesOnlyLmLinesWithTheirSize) {
  const std::vector<Measurement> m = measurements();
  // 11 sized lm lines; the text, the overhead line, the size-less lm line and the blank
  // line are skipped.
  ASSERT_EQ(m.size(), 11u);
  EXPECT_EQ(m[0].framework, "pytorch");
  EXPECT_EQ(m[0].d_model, 64);
  EXPECT_EQ(m[0].context, 128);
  EXPECT_EQ(m[0].params, 229952);
  EXPECT_DOUBLE_EQ(m[0].ms_per_step, 40.0);
  EXPECT_EQ(m[1].framework, "tapegrad");
  EXPECT_EQ(m[10].params, 0);  // none given
}

// Fields of another type: the line is skipped, or read without the optional field, never an
// exception from the JSON library that would end the program.
TEST(ScalingTableTest, FieldsOfAnotherTypeAreSkippedNotThrown) {
  std::istringstream in(R"({"workload": 7, "d_model": 64, "context": 128, "ms_per_step": 1}
{"workload": "tiny_lm_train_step", "d_model": "64", "context": 128, "ms_per_step": 1}
{"workload": "tiny_lm_train_step", "d_model": 64, "context": 128, "ms_per_step": 2, "framework": 3}
)");
  const std::vector<Measurement> m = parse_measurements(in);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].framework, "");  // the framework that is no string is not named
  EXPECT_DOUBLE_EQ(m[0].ms_per_step, 2.0);
}

TEST(ScalingTableTest, CountsTheFlopsOfTheReferenceWorkloadByHand) {
  // d = 128, f = 384, N = 2048 tokens, 4 layers, vocab 128. Forward, per layer:
  //   QKV 2*2048*128*384 = 201326592, out 2*2048*128*128 = 67108864,
  //   SwiGLU 3*2*2048*128*384 = 603979776, attention 2*2*16*128*128*128 = 134217728
  // = 1006632960; 4 layers + head 2*2048*128*128 = 67108864 -> 4093640704; x3 for backward.
  EXPECT_DOUBLE_EQ(lm_step_flops(128, 128), 12280922112.0);
  EXPECT_DOUBLE_EQ(lm_attention_flops(128, 128), 3.0 * 4 * 134217728);
  // Attention is the T^2 term: twice the context, four times its FLOPs; the rest is linear
  // in T (tokens) and about quadratic in d_model.
  EXPECT_DOUBLE_EQ(lm_attention_flops(128, 256), 4 * lm_attention_flops(128, 128));
  const auto rest = [](int64_t d, int64_t t) {
    return lm_step_flops(d, t) - lm_attention_flops(d, t);
  };
  EXPECT_DOUBLE_EQ(rest(128, 256), 2 * rest(128, 128));
  EXPECT_NEAR(rest(256, 128) / rest(128, 128), 4.0, 0.1);
}

TEST(ScalingTableTest, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
}

TEST(ScalingTableTest, EachSweepKeepsItsLineThroughTheReferenceSize) {
  const std::vector<Measurement> m = measurements();
  const std::vector<ScalingRow> d = sweep_rows(m, Sweep::kDModel);
  ASSERT_EQ(d.size(), 3u);  // 64, 128, 256 at context 128; (256, 256) is on neither line
  EXPECT_EQ(d[0].d_model, 64);
  EXPECT_EQ(d[1].d_model, 128);
  EXPECT_EQ(d[2].d_model, 256);
  EXPECT_EQ(d[1].runs.at("pytorch").size(), 3u);
  EXPECT_EQ(d[2].runs.count("tapegrad"), 0u);
  const std::vector<ScalingRow> t = sweep_rows(m, Sweep::kContext);
  ASSERT_EQ(t.size(), 2u);  // 64, 128 at d_model 128
  EXPECT_EQ(t[0].context, 64);
  EXPECT_EQ(t[1].context, 128);
  EXPECT_EQ(t[1].runs.at("tapegrad").size(), 2u);
}

TEST(ScalingTableTest, MarkdownTableOfMediansRatiosAndRates) {
  // Row 128: PyTorch median of 160, 150, 149 = 150; tapegrad mean of the middle two of
  // 60, 50 = 55; 150 / 55 = 2.73x; 12280922112 FLOP / 150 ms = 81.9 GFLOP/s.
  // Row 64: 3523215360 FLOP, 23% of it attention; 40 ms -> 88.1 GFLOP/s, 10 ms -> 352.3.
  // Row 256: no tapegrad run, so "-" where tapegrad's figure is needed.
  const std::string header =
      "| d_model | params | GFLOP/step | attention | PyTorch ms/step | tapegrad ms/step | "
      "tapegrad faster by | PyTorch GFLOP/s | tapegrad GFLOP/s | runs |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  EXPECT_EQ(markdown_table(sweep_rows(measurements(), Sweep::kDModel), Sweep::kDModel),
            header +
                "| 64 | 229952 | 3.52 | 23% | 40.0 | 10.0 | 4.00x | 88.1 | 352.3 | 1 / 1 |\n"
                "| 128 | 819328 | 12.28 | 13% | 150.0 | 55.0 | 2.73x | 81.9 | 223.3 | 3 / 2 |\n"
                "| 256 | 3212416 | 45.50 | 7% | 500.0 | - | - | 91.0 | - | 1 / 0 |\n");
  // Context 64: 5737807872 FLOP, 7% attention; 60 ms -> 95.6 GFLOP/s, 20 ms -> 286.9.
  const std::string table =
      markdown_table(sweep_rows(measurements(), Sweep::kContext), Sweep::kContext);
  EXPECT_EQ(table.substr(0, 12), "| context | ");
  EXPECT_NE(
      table.find("| 64 | 819328 | 5.74 | 7% | 60.0 | 20.0 | 3.00x | 95.6 | 286.9 | 1 / 1 |\n"),
      std::string::npos);
}

TEST(ScalingTableTest, PlotsMsPerStepAgainstDModelAndMicrosecondsPerTokenAgainstContext) {
  const std::vector<Measurement> m = measurements();
  const auto d = plot_series(sweep_rows(m, Sweep::kDModel), Sweep::kDModel);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].name, "PyTorch");
  EXPECT_EQ(d[0].x, (std::vector<double>{64, 128, 256}));
  EXPECT_EQ(d[0].y, (std::vector<double>{40, 150, 500}));
  EXPECT_EQ(d[1].name, "tapegrad");
  EXPECT_EQ(d[1].x, (std::vector<double>{64, 128}));  // no run at 256: no point
  EXPECT_EQ(d[1].y, (std::vector<double>{10, 55}));
  const auto t = plot_series(sweep_rows(m, Sweep::kContext), Sweep::kContext);
  // 20 ms for 16 x 64 tokens = 19.53125 us per token; 55 ms for 16 x 128 = 26.85546875.
  EXPECT_EQ(t[1].x, (std::vector<double>{64, 128}));
  EXPECT_EQ(t[1].y, (std::vector<double>{19.53125, 26.85546875}));
}

TEST(ScalingTableTest, WritesAnSvgWithBothSeries) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tapegrad_scaling_" + std::to_string(::getpid()) + ".svg"))
                               .string();
  write_plot(path, sweep_rows(measurements(), Sweep::kContext), Sweep::kContext);
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::filesystem::remove(path);
  const std::string svg = s.str();
  EXPECT_NE(svg.find("microseconds per token"), std::string::npos);
  EXPECT_NE(svg.find(">PyTorch<"), std::string::npos);
  EXPECT_NE(svg.find(">tapegrad<"), std::string::npos);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

}  // namespace
}  // namespace tg::bench
