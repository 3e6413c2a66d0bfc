// tools/exercise_tests.cpp — the course's test reports, from CTest's own files, and its hints.
//
//   exercise_tests list    --tests T.json                 # "<number>\t<name>" per test
//   exercise_tests ties    --tests T.json --probes DIR    # tests/exercise_ties.txt
//   exercise_tests grade   --tests T.json --junit R.xml [--only ID] [--lang zh]
//   exercise_tests check   --tests T.json --junit R.xml   # CI, on an all-blank tree
//   exercise_tests targets --tests T.json --only ID --bin DIR   # what grading ID must build
//   exercise_tests hint    ID [--lang zh] [--state FILE]  # unlocks the next hint of ID
//
// T.json is `ctest --show-only=json-v1`, R.xml is `ctest --output-junit`. scripts/grade.sh,
// scripts/hint.sh, scripts/tie_exercises.sh and scripts/check_student_tree.sh call this;
// tools/exercise_report.h and tools/exercise_hints.h have the rules.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <filesystem>

#include "core/error.h"
#include "tools/exercise_hints.h"
#include "tools/exercise_report.h"

namespace fs = std::filesystem;
using namespace tg::tools;

int main(int argc, char** argv) {
  CLI::App app{"exercise_tests: the course's exercises and their tests, from CTest's reports"};
  app.require_subcommand(1);
  std::string tests_json, junit, probes, only, bin_dir,
      lang = "en", state, hint_id,
      registry = std::string(TAPEGRAD_SOURCE_DIR) + "/tools/exercises.txt",
      hints_file = std::string(TAPEGRAD_SOURCE_DIR) + "/tools/hints.txt";
  app.add_option("--registry", registry, "tools/exercises.txt")->capture_default_str();
  CLI::App* list = app.add_subcommand("list", "number and name of every test");
  CLI::App* ties = app.add_subcommand("ties", "write tests/exercise_ties.txt from probe files");
  CLI::App* grade = app.add_subcommand("grade", "the table: exercise, status, passed, chapter");
  CLI::App* check = app.add_subcommand("check", "the results of an all-blank student tree");
  CLI::App* targets = app.add_subcommand("targets", "the programs one exercise's tests run");
  CLI::App* hint = app.add_subcommand("hint", "show the next hint of an exercise");
  for (CLI::App* sub : {list, ties, grade, check, targets}) {
    sub->add_option("--tests", tests_json, "ctest --show-only=json-v1 output")->required();
  }
  ties->add_option("--probes", probes, "directory of <test number>.txt probe files")->required();
  for (CLI::App* sub : {grade, check}) {
    sub->add_option("--junit", junit, "ctest --output-junit file")->required();
  }
  grade->add_option("--only", only, "one exercise's row");
  targets->add_option("--only", only, "the exercise")->required();
  targets->add_option("--bin", bin_dir, "the build's bin directory")->required();
  hint->add_option("id", hint_id, "the exercise")->required();
  hint->add_option("--state", state, "file remembering how many hints were shown")->required();
  hint->add_option("--hints", hints_file, "tools/hints.txt")->capture_default_str();
  for (CLI::App* sub : {grade, hint}) {
    sub->add_option("--lang", lang, "en or zh (the table's and the hints' language)")
        ->check(CLI::IsMember({"en", "zh"}));
  }
  CLI11_PARSE(app, argc, argv);
  try {
    const std::vector<Exercise> course = parse_registry(read_file(registry));
    if (hint->parsed()) {
      TG_CHECK(find_exercise(course, hint_id) != nullptr, ValueError,
               "hint: no exercise '{}' (tools/exercises.txt lists them)", hint_id);
      fmt::print("{}", next_hint(parse_hints(read_file(hints_file), course), hint_id,
                                 parse_lang(lang), state));
      return 0;
    }
    const std::vector<TestInfo> tests = parse_ctest_json(read_file(tests_json));
    if (list->parsed()) {
      for (size_t i = 0; i < tests.size(); ++i) fmt::print("{}\t{}\n", i + 1, tests[i].name);
      return 0;
    }
    if (targets->parsed()) {
      TG_CHECK(find_exercise(course, only) != nullptr, ValueError,
               "exercise_tests: no exercise {} (tools/exercises.txt lists them)", only);
      fmt::print("{}\n", fmt::join(targets_of(tests, only, bin_dir), " "));
      return 0;
    }
    if (ties->parsed()) {
      std::map<std::string, std::vector<std::string>> reached;
      for (size_t i = 0; i < tests.size(); ++i) {
        const fs::path file = fs::path(probes) / fmt::format("{}.txt", i + 1);
        if (!fs::exists(file)) continue;
        const std::string text = read_file(file.string());
        for (std::string_view id : lines_of(text)) {
          if (!id.empty()) reached[tests[i].name].emplace_back(id);
        }
      }
      fmt::print("{}", format_ties(course, tests, reached));
      return 0;
    }
    const std::vector<TestResult> results = parse_junit(read_file(junit));
    if (grade->parsed()) {
      TG_CHECK(only.empty() || find_exercise(course, only) != nullptr, ValueError,
               "exercise_tests: no exercise {} (tools/exercises.txt lists them)", only);
      fmt::print("{}", grade_table(course, tests, results, only, parse_lang(lang)));
      return 0;
    }
    const std::vector<std::string> problems = check_blank_tree(course, tests, results);
    size_t tied = 0;
    for (const TestInfo& t : tests) tied += t.exercises().empty() ? 0 : 1;
    for (const std::string& p : problems) fmt::print("{}\n", p);
    fmt::print("exercise_tests check: {} tests, {} tied to exercises: {}\n", tests.size(), tied,
               problems.empty() ? "every tied test failed with its NotImplemented message, "
                                  "every other test passed"
                                : fmt::format("{} problems", problems.size()));
    return problems.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
