// tools/error_table.h — the table of errors a user can meet (docs/errors.md), written from
// what the tests saw.
//
// Every EXPECT_TG_THROW in the tests (tests/support/test_util.h) and every refusal test of
// the example programs (tests/examples/refuses.cmake) records, when TAPEGRAD_ERROR_LOG names
// a directory, one JSON line per error: the test, what it did and what the user reads. This
// turns a directory of such lines into a Markdown table grouped by area, the same on every
// machine and from edit to edit: paths of the checkout, the build and the temporary
// directory, line numbers in the checkout and process ids inside temporary paths are
// replaced by placeholders.
#pragma once

#include <string>
#include <vector>

namespace tg::tools {

/// One error a test saw.
struct ErrorRecord {
  std::string test;       ///< "ViewTest.RefusesAWrongSize", or a CTest name for a program
  std::string file;       ///< the test's file, relative to the checkout
  int line = 0;           ///< where in it (orders the rows; not printed)
  std::string statement;  ///< what the test did: code, or a command line
  std::string kind;       ///< "ShapeError", ..., or "exit status 1" for a program
  std::string message;    ///< what the user reads
  std::string pid;        ///< the process that recorded it (for normalisation)
};

/// The directories whose names a message may contain, replaced by placeholders.
struct Roots {
  std::string source;  ///< the checkout -> "<source>"
  std::string build;   ///< the build directory -> "<build>"
  std::string tmp;     ///< the temporary directory -> "<tmp>"
};

/// Parses one JSON line of a log; ValueError naming `where` on a malformed one.
ErrorRecord parse_record(const std::string& line, const std::string& where);

/// Every record of every *.jsonl file in `dir`, in no particular order.
std::vector<ErrorRecord> read_log(const std::string& dir);

/// `text` with paths relative to the build directory that lead into the checkout
/// ("../tests/x_test.cpp", as a compiler cache's relative paths make __FILE__) made
/// absolute, the roots replaced (longest first), the line numbers after a path in the
/// checkout replaced by "<line>" and, inside temporary paths, the pid of the recording
/// process replaced by "<pid>".
std::string normalise(std::string text, const Roots& roots, const std::string& pid);

/// The Markdown of docs/errors.md: records normalised, duplicates dropped, grouped by the
/// area of their test file and ordered by file and line.
std::string render_table(std::vector<ErrorRecord> records, const Roots& roots);

}  // namespace tg::tools
