// tests/examples/run_log_test.cpp — the examples' run reporting: CSV rows, plain and JSON
// output, the SVG loss curve, tick choice, durations and the Ctrl-C flag.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "examples/common/interrupt.h"
#include "examples/common/plot.h"
#include "examples/common/run_log.h"
#include "test_util.h"

namespace tg::examples {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tapegrad_run_log_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(RunLogTest, PlainModeWritesCsvRowsAndPeriodicLines) {
  const std::string dir = temp_dir("plain");
  ::testing::internal::CaptureStdout();
  {
    RunLog log({.out_dir = dir,
                .total_steps = 4,
                .log_every = 2,
                .unit = "tok",
                .eval_columns = {"val_loss"},
                .force_plain = true});
    log.step(1, 2.5, 0.1, 1.0, 10);
    log.step(2, 2.0, 0.1, 0.5, 10);
    log.eval(2, {2.25});
    log.step(3, 1.5, 0.05, 0.25, 10);
    log.step(4, 1.0, 0.0, 0.125, 10);
    log.finish({{"val_loss", 2.25}});
  }
  const std::vector<std::string> out = lines_of(::testing::internal::GetCapturedStdout());
  ASSERT_GE(out.size(), 4u);
  EXPECT_THAT(out[0], ::testing::StartsWith("step 2/4  loss 2.0000  lr 0.1  grad_norm 0.500"));
  EXPECT_EQ(out[1], "eval at step 2:  val_loss 2.2500");
  EXPECT_THAT(out[2], ::testing::StartsWith("step 4/4  loss 1.0000"));
  EXPECT_THAT(out, ::testing::Contains("val_loss: 2.25"));

  const std::vector<std::string> csv = lines_of(read_file(dir + "/metrics.csv"));
  ASSERT_EQ(csv.size(), 6u);
  EXPECT_EQ(csv[0], "step,loss,lr,grad_norm,val_loss,elapsed_s");
  EXPECT_THAT(csv[1], ::testing::StartsWith("1,2.5,0.1,1,,"));
  EXPECT_THAT(csv[3], ::testing::StartsWith("2,,,,2.25,"));  // the eval row
  EXPECT_THAT(csv[5], ::testing::StartsWith("4,1,0,0.125,,"));

  const std::string svg = read_file(dir + "/loss.svg");
  EXPECT_THAT(svg, ::testing::StartsWith("<svg"));
  EXPECT_THAT(svg, ::testing::HasSubstr("<polyline"));
  EXPECT_THAT(svg, ::testing::HasSubstr("val_loss"));  // eval losses are plotted as points
  EXPECT_THAT(svg, ::testing::EndsWith("</svg>\n"));
  std::filesystem::remove_all(dir);
}

TEST(RunLogTest, ResumedRunKeepsTheRowsUpToItsCheckpoint) {
  const std::string dir = temp_dir("resume");
  auto run = [&](int64_t resumed_at, int64_t first, int64_t last, double loss) {
    RunLog log({.out_dir = dir,
                .total_steps = 4,
                .eval_columns = {"val_loss"},
                .force_plain = true,
                .resumed_at_step = resumed_at});
    for (int64_t s = first; s <= last; ++s) {
      log.step(s, loss, 0.1, 1.0, 10);
      if (s % 2 == 0) log.eval(s, {loss + 1});
    }
  };
  ::testing::internal::CaptureStdout();
  run(-1, 1, 3, 5.0);  // killed after step 3, but its last checkpoint was at step 2
  {
    std::ofstream torn(dir + "/metrics.csv", std::ios::app);
    torn << "4,4.5,0.1";  // and it died while writing a row
  }
  run(2, 3, 4, 7.0);  // resumed from the checkpoint at step 2
  ::testing::internal::GetCapturedStdout();
  const std::vector<std::string> csv = lines_of(read_file(dir + "/metrics.csv"));
  ASSERT_EQ(csv.size(), 7u) << read_file(dir + "/metrics.csv");
  EXPECT_EQ(csv[0], "step,loss,lr,grad_norm,val_loss,elapsed_s");
  EXPECT_THAT(csv[1], ::testing::StartsWith("1,5,"));
  EXPECT_THAT(csv[2], ::testing::StartsWith("2,5,"));
  EXPECT_THAT(csv[3], ::testing::StartsWith("2,,,,6,"));
  EXPECT_THAT(csv[4], ::testing::StartsWith("3,7,"));  // step 3 again, from the resumed run
  EXPECT_THAT(csv[5], ::testing::StartsWith("4,7,"));
  EXPECT_THAT(csv[6], ::testing::StartsWith("4,,,,8,"));
  // elapsed_s carries on from the kept rows
  const auto elapsed = [](const std::string& row) {
    return std::stod(row.substr(row.rfind(',') + 1));
  };
  EXPECT_GE(elapsed(csv[4]), elapsed(csv[3]));

  // A file with other columns is not continued: the resumed run starts it afresh.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/metrics.csv") << "step,accuracy\n1,0.5\n";
  ::testing::internal::CaptureStdout();
  run(1, 2, 2, 3.0);
  ::testing::internal::GetCapturedStdout();
  const std::vector<std::string> fresh = lines_of(read_file(dir + "/metrics.csv"));
  ASSERT_EQ(fresh.size(), 3u);
  EXPECT_THAT(fresh[1], ::testing::StartsWith("2,3,"));
  std::filesystem::remove_all(dir);
}

TEST(RunLogTest, ResumeReplacesTheMetricsFileInsteadOfRewritingItInPlace) {
  // A kill while a resumed run trims metrics.csv used to leave it empty: it was truncated,
  // then rewritten. Now the kept rows go to a temporary that is renamed over the file, so
  // the path names a complete file at every moment. The proof: a reader that opened the
  // old file before the resume still reads all of it afterwards (the file it holds was
  // replaced, not truncated), and no temporary is left behind.
  const std::string dir = temp_dir("replace");
  std::filesystem::create_directories(dir);
  const std::string old_rows = "step,loss,lr,grad_norm,elapsed_s\n1,5,0.1,1,0.5\n2,5,0.1,1,1\n";
  std::ofstream(dir + "/metrics.csv") << old_rows;
  std::ifstream reader(dir + "/metrics.csv");
  ::testing::internal::CaptureStdout();
  {
    RunLog log({.out_dir = dir, .total_steps = 4, .force_plain = true, .resumed_at_step = 1});
    log.step(2, 4.0, 0.1, 1.0, 10);
  }
  ::testing::internal::GetCapturedStdout();
  std::stringstream held;
  held << reader.rdbuf();
  EXPECT_EQ(held.str(), old_rows);
  const std::vector<std::string> csv = lines_of(read_file(dir + "/metrics.csv"));
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_THAT(csv[1], ::testing::StartsWith("1,5,"));
  EXPECT_THAT(csv[2], ::testing::StartsWith("2,4,"));
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(::testing::HasSubstr(".tmp-")));
  std::filesystem::remove_all(dir);
}

TEST(RunLogTest, JsonModePrintsOnlyJsonObjects) {
  const std::string dir = temp_dir("json");
  ::testing::internal::CaptureStdout();
  {
    RunLog log({.out_dir = dir,
                .total_steps = 2,
                .json = true,
                .log_every = 1,
                .eval_columns = {"val_loss", "accuracy"}});
    log.step(1, 3.0, 0.1, 1.0, 4);
    log.note("this goes to stderr");
    log.step(2, 2.0, 0.1, 1.0, 4);
    log.eval(2, {2.5, 0.75});
    log.finish({{"final", true}});
  }
  const std::vector<std::string> out = lines_of(::testing::internal::GetCapturedStdout());
  ASSERT_EQ(out.size(), 2u);
  const auto eval = nlohmann::json::parse(out[0]);
  EXPECT_EQ(eval["event"], "eval");
  EXPECT_EQ(eval["step"], 2);
  EXPECT_EQ(eval["train_loss"], 2.0);
  EXPECT_EQ(eval["accuracy"], 0.75);
  const auto summary = nlohmann::json::parse(out[1]);
  EXPECT_EQ(summary["event"], "summary");
  EXPECT_EQ(summary["final"], true);
  EXPECT_EQ(summary["metrics_csv"], dir + "/metrics.csv");
  std::filesystem::remove_all(dir);
}

TEST(RunLogTest, EvalWithTheWrongNumberOfValuesIsAnError) {
  const std::string dir = temp_dir("bad_eval");
  RunLog log({.out_dir = dir, .eval_columns = {"val_loss"}, .force_plain = true});
  EXPECT_TG_THROW(log.eval(1, {1.0, 2.0}), ValueError, "RunLog::eval", "2 values", "1 eval");
  std::filesystem::remove_all(dir);
}

TEST(RunLogTest, UnwritableDirectoryIsAnError) {
  EXPECT_TG_THROW(RunLog({.out_dir = "/proc/no/such/dir"}), Error, "RunLog", "/proc/no/such/dir");
  EXPECT_TG_THROW(RunLog({.out_dir = ""}), ValueError, "out_dir");
}

TEST(PlotTest, NiceTicksUseOneTwoFiveSteps) {
  EXPECT_EQ(nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(0.13, 0.61, 5), (std::vector<double>{0.2, 0.3, 0.4, 0.5, 0.6}));
  EXPECT_EQ(nice_ticks(-3, 12, 3), (std::vector<double>{0, 5, 10}));
  EXPECT_EQ(nice_ticks(1, 1), (std::vector<double>{1}));  // no range: one tick
}

TEST(PlotTest, MismatchedSeriesIsAnError) {
  EXPECT_TG_THROW(write_line_plot("/tmp/unused.svg", "t", "x", "y", {{"s", "red", {1, 2}, {1}}}),
                  ValueError, "write_line_plot", "'s'", "2 x values", "1 y values");
}

TEST(PlotTest, NonFiniteValuesAreSkipped) {
  const std::string path = temp_dir("nan") + ".svg";
  write_line_plot(path, "a < b & c", "x", "y", {{"loss", "red", {1, 2, 3}, {1.0, NAN, 0.5}}});
  const std::string svg = read_file(path);
  EXPECT_THAT(svg, ::testing::HasSubstr("a &lt; b &amp; c"));  // text is escaped
  EXPECT_THAT(svg, ::testing::Not(::testing::HasSubstr("nan")));
  std::filesystem::remove(path);
}

TEST(RunLogTest, DurationsReadLikeAClock) {
  EXPECT_EQ(format_duration(12.4), "12s");
  EXPECT_EQ(format_duration(187), "3m07s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(NAN), "?");
}

TEST(InterruptTest, RequestStopSetsTheFlag) {
  install_stop_handler();
  EXPECT_FALSE(stop_requested());
  request_stop();
  EXPECT_TRUE(stop_requested());
}

}  // namespace
}  // namespace tg::examples
