// tools/exercise_report.h — which tests belong to which exercise, and how they went.
//
// A test is tied to every course exercise whose code it runs. The ties come from
// tests/exercise_ties.txt, which scripts/tie_exercises.sh writes by running every test once
// in a probe tree (tools/student_tree --probe): a test is tied to exactly the exercises it
// reached. tests/CMakeLists.txt turns them into CTest labels: the last of them in course
// order is the test's own exercise ("exercise:<id>"), the earlier ones are "needs:<id>".
// The grade of an exercise counts its own tests: they pass once it and every exercise
// before it are written.
//
// From CTest's own reports — the test list with labels (ctest --show-only=json-v1) and the
// results (ctest --output-junit) — this file builds the grade table of scripts/grade.sh and
// the check CI runs on an all-blank student tree: every tied test fails with the message of
// one of its exercises, every untied test passes.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tools/exercise_markers.h"

namespace tg::tools {

inline constexpr std::string_view kExerciseLabel = "exercise:";
inline constexpr std::string_view kNeedsLabel = "needs:";

/// One test as CTest lists it.
struct TestInfo {
  std::string name;
  std::vector<std::string> labels;
  std::vector<std::string> command = {};            // the program and its arguments
  std::vector<std::string> fixtures_required = {};  // FIXTURES_REQUIRED
  std::vector<std::string> fixtures_setup = {};     // FIXTURES_SETUP
  std::string exercise() const;                     // its "exercise:" label's id, or ""
  std::vector<std::string> exercises() const;       // every exercise it runs: needs, then its own
};

/// One test's outcome. status is JUnit's: "run" (passed), "fail", "notrun", "disabled".
struct TestResult {
  std::string name;
  std::string status;
  std::string output;
};

/// The tests of `ctest --show-only=json-v1`, in CTest's order (the -I numbers).
std::vector<TestInfo> parse_ctest_json(std::string_view json);

/// The test cases of `ctest --output-junit`, their output unescaped.
std::vector<TestResult> parse_junit(std::string_view xml);

/// The line of a failed test's output that says best what went wrong: the NotImplemented
/// message of an exercise if there is one, else the first GoogleTest failure (its place
/// and the line after it), else the first line mentioning an error; "" if none.
std::string first_failure(std::string_view output);

/// The message a test gave GTEST_SKIP() (the line after GoogleTest's "...: Skipped"), or "".
std::string skip_reason(std::string_view output);

/// The id in "exercise <id> is not implemented yet" within `text`, or "".
std::string not_implemented_id(std::string_view text);

/// tests/exercise_ties.txt: one line per test that reached any exercise,
/// "<name>\t<its other labels, ','-separated>\t<ids, ' '-separated, in course order>".
/// `reached` maps a test's name to the ids its probe file recorded.
std::string format_ties(const std::vector<Exercise>& course, const std::vector<TestInfo>& tests,
                        const std::map<std::string, std::vector<std::string>>& reached);

/// The language of the grade table: English, or Chinese (zh).
enum class Lang { kEnglish, kChinese };

/// "en" or "zh" (and what LANG holds: "zh_CN.UTF-8" is Chinese, anything else English).
Lang parse_lang(std::string_view name);

/// Where a learner reads about an exercise: the chapter's exercise section, in `lang`
/// ("docs/course/zh/06-rms-norm.md#练习与测试").
std::string exercise_section(const Exercise& e, Lang lang);

/// The table, in `lang`: one row per exercise of the course (or only `only`): id, pass or
/// fail, its own tests passed / its own tests, the chapter section that teaches it, and for
/// a failure the first failing test with its message.
std::string grade_table(const std::vector<Exercise>& course, const std::vector<TestInfo>& tests,
                        const std::vector<TestResult>& results, std::string_view only = {},
                        Lang lang = Lang::kEnglish);

/// The CMake targets the tests of `only` (those labelled exercise:<only>) need, and the
/// fixture setups they require: each program under `bin_dir` that a test's command names
/// (a GoogleTest binary, or an example a script runs). Empty if a test names none (then
/// everything must be built). Sorted, each once.
std::vector<std::string> targets_of(const std::vector<TestInfo>& tests, std::string_view only,
                                    std::string_view bin_dir);

/// What is wrong with the results of an all-blank student tree, one line per problem:
/// - a tied test that passed, or failed without the NotImplemented message of one of its
///   exercises;
/// - a tied test that skipped itself (GTEST_SKIP): it ran none of its exercises' code, so
///   it proves nothing about the blanks, and the message says why it skipped (what is
///   missing on this machine, which scripts/setup.sh should install). Not running because
///   its fixture's setup test failed is fine: that setup test is checked itself;
/// - an untied test that did not pass (a skip is fine: it is tied to no blank);
/// - an exercise with no test.
std::vector<std::string> check_blank_tree(const std::vector<Exercise>& course,
                                          const std::vector<TestInfo>& tests,
                                          const std::vector<TestResult>& results);

}  // namespace tg::tools
