// tools/error_table_main.cpp — writes docs/errors.md from the errors the tests recorded, or
// checks that it is current (tools/error_table.h says how they are recorded).
//
//   build/bin/error_table --log DIR --write docs/errors.md
//   build/bin/error_table --log DIR --check docs/errors.md
//
// scripts/error_table.sh runs the tests with TAPEGRAD_ERROR_LOG=DIR and then this; .ci/run
// checks after its own test run. --check exits with 1 and names the first rows that differ.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "tools/error_table.h"

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The rows of `a` that `b` lacks, at most `limit` of them.
std::vector<std::string> missing_rows(const std::vector<std::string>& a,
                                      const std::vector<std::string>& b, size_t limit) {
  std::vector<std::string> out;
  for (const std::string& line : a)
    if (out.size() < limit && line.starts_with("| `") &&
        std::find(b.begin(), b.end(), line) == b.end())
      out.push_back(line);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"error_table: docs/errors.md from the errors the tests recorded"};
  std::string log, write, check;
  tg::tools::Roots roots{TAPEGRAD_SOURCE_DIR, TAPEGRAD_BINARY_DIR, ""};
  app.add_option("--log", log, "the directory the tests wrote (TAPEGRAD_ERROR_LOG)")->required();
  app.add_option("--write", write, "write the table to this file");
  app.add_option("--check", check, "compare the table with this file; exit 1 if it differs");
  app.add_option("--source", roots.source, "the checkout, shown as <source>");
  app.add_option("--build", roots.build, "the build directory, shown as <build>");
  CLI11_PARSE(app, argc, argv);
  try {
    TG_CHECK(write.empty() != check.empty(), ValueError,
             "error_table: give one of --write FILE and --check FILE");
    const char* tmp = std::getenv("TMPDIR");
    roots.tmp = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    const auto records = tg::tools::read_log(log);
    TG_CHECK(!records.empty(), ValueError,
             "error_table: '{}' holds no records: were the tests run with TAPEGRAD_ERROR_LOG={}?",
             log, log);
    const std::string table = tg::tools::render_table(records, roots);
    if (!write.empty()) {
      std::ofstream out(write, std::ios::binary);
      out << table;
      TG_CHECK(out.good(), ValueError, "error_table: cannot write '{}'", write);
      fmt::print("error_table: wrote {} ({} records)\n", write, records.size());
      return 0;
    }
    std::ifstream in(check, std::ios::binary);
    TG_CHECK(in.good(), ValueError, "error_table: cannot read '{}'", check);
    std::stringstream held;
    held << in.rdbuf();
    if (held.str() == table) {
      fmt::print("error_table: {} is current\n", check);
      return 0;
    }
    const auto now = lines_of(table), before = lines_of(held.str());
    fmt::print(stderr, "error_table: {} is out of date; run scripts/error_table.sh\n", check);
    for (const std::string& row : missing_rows(now, before, 10))
      fmt::print(stderr, "  the tests now see:  {}\n", row);
    for (const std::string& row : missing_rows(before, now, 10))
      fmt::print(stderr, "  no test sees now:   {}\n", row);
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
