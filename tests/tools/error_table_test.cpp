// tests/tools/error_table_test.cpp — the table of errors (tools/error_table.h) and the
// recording that feeds it (record_error in tests/support/test_util.h).
#include "tools/error_table.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace {

using tg::tools::ErrorRecord;
using tg::tools::Roots;

const Roots kRoots{"/src/tapegrad", "/src/tapegrad/build", "/tmp"};

ErrorRecord record(std::string file, int line, std::string statement, std::string message) {
  return ErrorRecord{"SomeTest.Case", std::move(file),    line,  std::move(statement),
                     "ShapeError",    std::move(message), "4242"};
}

TEST(ErrorTableTest, WhatTheMacroWritesParsesBack) {
  // json_quoted is what record_error writes each field with: quotes, backslashes, control
  // characters, UTF-8 and bytes that are not UTF-8 must all come back readable.
  const std::string message = "view: \"a\\b\"\n\tshape (2, 3) \xe4\xb8\xad \xff\xc3 end";
  const std::string line =
      "{\"test\": \"T.N\", \"file\": \"tests/ops/x.cpp\", \"line\": 7, " +
      std::string("\"statement\": ") + tg::testing::json_quoted("x.view({5})") +
      ", \"kind\": \"ShapeError\", \"message\": " + tg::testing::json_quoted(message) +
      ", \"pid\": 12}";
  const ErrorRecord r = tg::tools::parse_record(line, "here");
  EXPECT_EQ(r.statement, "x.view({5})");
  EXPECT_EQ(r.message, "view: \"a\\b\"\n\tshape (2, 3) \xe4\xb8\xad \\xff\\xc3 end");
  EXPECT_EQ(r.line, 7);
  EXPECT_EQ(r.pid, "12");
}

TEST(ErrorTableTest, AMalformedLineIsNamed) {
  EXPECT_TG_THROW(tg::tools::parse_record("{\"test\": 1", "log/1.jsonl:3"), ValueError,
                  "log/1.jsonl:3 is not JSON");
  EXPECT_TG_THROW(tg::tools::parse_record("{\"test\": \"T\"}", "log/1.jsonl:4"), ValueError,
                  "log/1.jsonl:4 has no string \"file\"");
}

TEST(ErrorTableTest, NormalisingHidesWhatDiffersBetweenMachines) {
  EXPECT_EQ(tg::tools::normalise("cannot read '/src/tapegrad/build/tests/x' or /src/tapegrad/a",
                                 kRoots, ""),
            "cannot read '<build>/tests/x' or <source>/a");
  EXPECT_EQ(tg::tools::normalise("called at /src/tapegrad/tests/a_test.cpp:213 in f()", kRoots, ""),
            "called at <source>/tests/a_test.cpp:<line> in f()");
  // A path relative to the build directory (the compiler given relative paths, as under
  // ccache's base_dir) is the same path: "../" from <build> leads into <source>.
  EXPECT_EQ(tg::tools::normalise("called at ../tests/a_test.cpp:213 in f()", kRoots, ""),
            "called at <source>/tests/a_test.cpp:<line> in f()");
  EXPECT_EQ(tg::tools::normalise("'../../x/y' (../tests/a_test.cpp:7)", kRoots, ""),
            "'../../x/y' (<source>/tests/a_test.cpp:<line>)");  // the first leads outside
  EXPECT_EQ(tg::tools::normalise("a../tests/b ..x", kRoots, ""), "a../tests/b ..x");
  // A root is replaced only where a path starts, not inside a longer name.
  EXPECT_EQ(tg::tools::normalise("/src/tapegrad2/x /tmpfiles", kRoots, ""),
            "/src/tapegrad2/x /tmpfiles");
  // The pid goes only inside temporary paths, and only as a whole number.
  EXPECT_EQ(tg::tools::normalise("'/tmp/run_4242/f.bin.tmp-4242-0': 4242 bytes, /tmp/a_42421",
                                 kRoots, "4242"),
            "'<tmp>/run_<pid>/f.bin.tmp-<pid>-0': 4242 bytes, <tmp>/a_42421");
}

TEST(ErrorTableTest, RowsAreGroupedByAreaDeduplicatedAndEscaped) {
  std::vector<ErrorRecord> records = {
      record("/src/tapegrad/tests/ops/b_test.cpp", 9, "f(a | b)", "op: `x` | y\nsecond line"),
      record("/src/tapegrad/tests/core/a_test.cpp", 5, "x.view({5})", "view: bad"),
      record("/src/tapegrad/tests/core/a_test.cpp", 5, "x.view({5})", "view: bad"),  // twice
      {"refuses.tiny_lm.steps", "/src/tapegrad/tests/examples/refusal_cases.cmake", 0,
       "tiny_lm train --out /tmp/o_4242", "exit status 1", "tiny_lm: --steps: bad", "4242"},
  };
  const std::string md = tg::tools::render_table(records, kRoots);
  EXPECT_THAT(md, ::testing::HasSubstr("3 errors, from 2 tests"));
  const size_t core = md.find("## Tensors"), ops = md.find("## Ops"),
               programs = md.find("## The example programs");
  ASSERT_NE(core, std::string::npos);
  EXPECT_LT(core, ops);
  EXPECT_LT(ops, programs);
  EXPECT_THAT(md, ::testing::HasSubstr("| `x.view({5})` | **ShapeError**: `view: bad` | "
                                       "[SomeTest.Case](../tests/core/a_test.cpp) |\n"));
  EXPECT_THAT(md, ::testing::HasSubstr(
                      "| `f(a \\| b)` | **ShapeError**: ``op: `x` \\| y``<br>`second line` |"));
  EXPECT_THAT(md, ::testing::HasSubstr(
                      "| `tiny_lm train --out <tmp>/o_<pid>` | "
                      "**exit status 1**: `tiny_lm: --steps: bad` | [refuses.tiny_lm.steps]"));
}

TEST(ErrorTableTest, ReadsEveryLogFileOfADirectory) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tapegrad_error_log_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string line =
      "{\"test\": \"T.N\", \"file\": \"f\", \"statement\": \"s\", \"kind\": \"K\", \"message\": "
      "\"m\"}";
  std::ofstream(dir / "1.jsonl") << line << "\n" << line << "\n";
  std::ofstream(dir / "2.jsonl") << line << "\n";
  std::ofstream(dir / "notes.txt") << "not a log";
  EXPECT_EQ(tg::tools::read_log(dir.string()).size(), 3u);
  std::ofstream(dir / "3.jsonl") << "garbage\n";
  EXPECT_TG_THROW(tg::tools::read_log(dir.string()), ValueError, "3.jsonl:1 is not JSON");
  fs::remove_all(dir);
  EXPECT_TG_THROW(tg::tools::read_log(dir.string()), ValueError, "is not a directory");
}

}  // namespace
