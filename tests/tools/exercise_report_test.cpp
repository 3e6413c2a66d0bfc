// tests/tools/exercise_report_test.cpp — ties, grades and the blank-tree check of the course.
#include "tools/exercise_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::ThrowsMessage;
using namespace tg::tools;

const std::vector<Exercise> kCourse = {{"autograd.reverse_loop", "docs/course/02-autograd.md"},
                                       {"rms_norm.backward", "docs/course/06-rms-norm.md"},
                                       {"adamw.step", "docs/course/14-optimizers.md"}};

const std::string kMessage =
    "exercise rms_norm.backward is not implemented yet — see docs/course/06-rms-norm.md";

TEST(ParseCtestJsonTest, NamesAndLabelsInOrder) {
  const std::vector<TestInfo> tests = parse_ctest_json(R"({"kind": "ctestInfo", "tests": [
      {"name": "A.b", "properties": [{"name": "WORKING_DIRECTORY", "value": "/x"},
                                      {"name": "LABELS", "value": ["ops", "needs:autograd.reverse_loop",
                                                                   "exercise:rms_norm.backward"]}]},
      {"name": "C.d"}]})");
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[0].name, "A.b");
  EXPECT_EQ(tests[0].exercise(), "rms_norm.backward");
  EXPECT_THAT(tests[0].exercises(), ElementsAre("autograd.reverse_loop", "rms_norm.backward"));
  EXPECT_EQ(tests[1].name, "C.d");
  EXPECT_EQ(tests[1].exercise(), "");
  EXPECT_THAT(tests[1].exercises(), IsEmpty());
  EXPECT_THAT([] { parse_ctest_json("[1, 2]"); },
              ThrowsMessage<tg::ValueError>(HasSubstr("not the output of ctest")));
  EXPECT_THAT([] { parse_ctest_json("{oops"); },
              ThrowsMessage<tg::ValueError>(HasSubstr("not the output of ctest")));
}

TEST(ParseJunitTest, StatusAndUnescapedOutput) {
  const std::vector<TestResult> r = parse_junit(R"xml(<?xml version="1.0"?>
<testsuite name="(empty)" tests="3">
  <testcase name="A.b" classname="A.b" time="0.1" status="fail">
    <failure message="Failed"/>
    <system-out>x.cpp:3: Failure
a &lt; b &amp;&amp; &quot;c&quot;</system-out>
  </testcase>
  <testcase name="C&amp;d" classname="C&amp;d" time="0" status="run">
    <system-out>ok</system-out>
  </testcase>
  <testcase name="E.f" status="notrun"/>
</testsuite>)xml");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].name, "A.b");
  EXPECT_EQ(r[0].status, "fail");
  EXPECT_EQ(r[0].output, "x.cpp:3: Failure\na < b && \"c\"");
  EXPECT_EQ(r[1].name, "C&d");
  EXPECT_EQ(r[1].status, "run");
  EXPECT_EQ(r[1].output, "ok");
  EXPECT_EQ(r[2].name, "E.f");
  EXPECT_EQ(r[2].status, "notrun");
  EXPECT_EQ(r[2].output, "");
  EXPECT_THAT([] { parse_junit(R"(<testcase name="A" status="run">no end)"); },
              ThrowsMessage<tg::ValueError>(HasSubstr("test case A has no </testcase>")));
}

TEST(FirstFailureTest, PrefersTheNotImplementedMessageThenGoogleTestThenErrors) {
  const std::string gtest =
      "[ RUN      ] A.b\n/src/tests/ops/x_test.cpp:45: Failure\n\n"
      "Expected equality of these values:\n  1\n  2\n";
  EXPECT_EQ(first_failure(gtest), "x_test.cpp:45: Expected equality of these values:");
  EXPECT_EQ(first_failure(gtest + "unknown file: Failure\nC++ exception with description \"" +
                          kMessage + "\" thrown in the test body.\n"),
            kMessage);
  // The message as a student tree throws it names both chapters: both are kept.
  const std::string both = kMessage + " (中文: docs/course/zh/06-rms-norm.md)";
  EXPECT_EQ(first_failure("unknown file: Failure\nC++ exception with description \"" + both +
                          "\" thrown in the test body.\n"),
            both);
  EXPECT_EQ(first_failure("step 1\ntg::ValueError: moons: bad --steps\n"),
            "tg::ValueError: moons: bad --steps");
  EXPECT_EQ(first_failure("all fine\n"), "");
  EXPECT_EQ(not_implemented_id("x " + kMessage), "rms_norm.backward");
  EXPECT_EQ(not_implemented_id("nothing here"), "");
}

TEST(SkipReasonTest, IsTheLineAfterGoogleTestsSkippedMarker) {
  EXPECT_EQ(skip_reason("[ RUN      ] A.b\n/src/tests/a_test.cpp:9: Skipped\n\n"
                        "  Graphviz (dot) is not installed\n[  SKIPPED ] A.b (0 ms)\n"),
            "Graphviz (dot) is not installed");
  EXPECT_EQ(skip_reason("[  SKIPPED ] A.b (0 ms)\n"), "");
  EXPECT_EQ(skip_reason("x_test.cpp:45: Failure\nboom\n"), "");
}

TEST(FormatTiesTest, OneLinePerTiedTestInCourseOrderWithoutExerciseLabels) {
  const std::vector<TestInfo> tests = {{"A.b", {"ops", "reference_kernels", "exercise:adamw.step"}},
                                       {"C.d", {"core"}},
                                       {"E.f", {"nn"}}};
  const std::string ties = format_ties(
      kCourse, tests, {{"A.b", {"rms_norm.backward", "autograd.reverse_loop"}}, {"C.d", {}}});
  EXPECT_THAT(ties,
              HasSubstr("\nA.b\tops,reference_kernels\tautograd.reverse_loop rms_norm.backward\n"));
  EXPECT_THAT(ties, ::testing::Not(HasSubstr("C.d")));
  EXPECT_THAT(ties, ::testing::Not(HasSubstr("E.f")));
  EXPECT_THAT(
      [&] {
        format_ties(kCourse, tests, {{"A.b", {"nope.nope"}}});
      },
      ThrowsMessage<tg::ValueError>(
          HasSubstr("test A.b reached exercise nope.nope, which tools/exercises.txt")));
}

TEST(GradeTableTest, CountsEachExercisesOwnTestsAndShowsTheFirstFailure) {
  const std::vector<TestInfo> tests = {
      {"Loop.a", {"core", "exercise:autograd.reverse_loop"}},
      {"Rms.a", {"ops", "needs:autograd.reverse_loop", "exercise:rms_norm.backward"}},
      {"Rms.b", {"ops", "needs:autograd.reverse_loop", "exercise:rms_norm.backward"}},
      {"Untied", {"core"}}};
  const std::vector<TestResult> results = {{"Loop.a", "run", ""},
                                           {"Rms.a", "run", ""},
                                           {"Rms.b", "fail", "unknown file: Failure\n" + kMessage},
                                           {"Untied", "fail", "x.cpp:1: Failure\nboom"}};
  const std::string table = grade_table(kCourse, tests, results);
  EXPECT_THAT(table, HasSubstr("exercise               status       passed  read"));
  EXPECT_THAT(table, HasSubstr("autograd.reverse_loop  pass         1/1     "
                               "docs/course/02-autograd.md#the-exercise-and-its-tests\n"));
  EXPECT_THAT(table, HasSubstr("rms_norm.backward      FAIL         1/2     "
                               "docs/course/06-rms-norm.md#the-exercise-and-its-tests    "
                               "Rms.b: " +
                               kMessage + "\n"));
  EXPECT_THAT(table, HasSubstr("adamw.step             no test ran  0/0     "
                               "docs/course/14-optimizers.md#the-exercise-and-its-tests\n"));
  EXPECT_THAT(table, HasSubstr("1 of 3 exercises pass every test\n"));
  const std::string one = grade_table(kCourse, tests, results, "rms_norm.backward");
  EXPECT_THAT(one, ::testing::Not(HasSubstr("autograd.reverse_loop  docs")));
  EXPECT_THAT(one, HasSubstr("0 of 1 exercises pass every test"));
  // A test that CTest did not run (a -L filter) is left out; one whose setup failed says so.
  const std::string notrun =
      grade_table(kCourse, tests, {{"Rms.a", "notrun", ""}}, "rms_norm.backward");
  EXPECT_THAT(notrun, HasSubstr("Rms.a: not run (a test it needs failed)"));
}

TEST(GradeTableTest, SpeaksTheLearnersLanguageAndPointsAtTheirChapter) {
  EXPECT_EQ(parse_lang("zh"), Lang::kChinese);
  EXPECT_EQ(parse_lang("zh_CN.UTF-8"), Lang::kChinese);
  EXPECT_EQ(parse_lang("en"), Lang::kEnglish);
  EXPECT_EQ(parse_lang("C.UTF-8"), Lang::kEnglish);
  EXPECT_EQ(exercise_section(kCourse[1], Lang::kChinese),
            "docs/course/zh/06-rms-norm.md#练习与测试");
  const std::vector<TestInfo> tests = {
      {"Rms.a", {"ops", "exercise:rms_norm.backward"}},
      {"Adam.a", {"nn", "exercise:adamw.step"}},
  };
  const std::string table = grade_table(
      kCourse, tests, {{"Rms.a", "fail", kMessage}, {"Adam.a", "run", ""}}, {}, Lang::kChinese);
  // The columns line up on a terminal, where a Chinese character is two columns wide:
  // "练习" is as wide as "ab  ", so the id column (21 wide) pads it with 17 spaces.
  EXPECT_THAT(table, HasSubstr("练习" + std::string(17, ' ') + "  状态"));
  // The status column is as wide as "没有运行测试" (12 columns, the untested exercise's).
  EXPECT_THAT(table,
              HasSubstr("rms_norm.backward      未通过" + std::string(8, ' ') + "0/1   " +
                        "docs/course/zh/06-rms-norm.md#练习与测试    Rms.a: " + kMessage + "\n"));
  EXPECT_THAT(table, HasSubstr("adamw.step             通过" + std::string(10, ' ') + "1/1   " +
                               "docs/course/zh/14-optimizers.md#练习与测试\n"));
  EXPECT_THAT(table, HasSubstr("3 个练习中，1 个的测试全部通过\n"));
}

TEST(TargetsTest, TheProgramsAnExercisesTestsAndTheirFixturesRun) {
  const std::string bin = "/b/bin";
  std::vector<TestInfo> tests = {
      {"Rms.a", {"ops", "exercise:rms_norm.backward"}, {"/b/bin/ops_rms_norm_test", "--x"}},
      {"Rms.b", {"ops", "exercise:rms_norm.backward"}, {"/b/bin/ops_rms_norm_test"}},
      {"example.lm",
       {"examples", "exercise:rms_norm.backward"},
       {"/usr/bin/cmake", "-DRUN=/b/bin/tiny_lm|--steps|3", "-P", "run.cmake"},
       {"lm_checkpoint"}},
      {"make.ckpt", {"examples"}, {"/b/bin/bad_checkpoints"}, {}, {"lm_checkpoint"}},
      {"Other", {"ops", "exercise:adamw.step"}, {"/b/bin/nn_optim_test"}},
  };
  EXPECT_THAT(targets_of(tests, "rms_norm.backward", bin),
              ElementsAre("bad_checkpoints", "ops_rms_norm_test", "tiny_lm"));
  EXPECT_THAT(targets_of(tests, "adamw.step", bin), ElementsAre("nn_optim_test"));
  EXPECT_THAT(targets_of(tests, "autograd.reverse_loop", bin), IsEmpty());
  // A test that runs no program of the build: nothing short of everything will do.
  tests.push_back({"Script", {"ops", "exercise:adamw.step"}, {"/bin/sh", "x.sh"}});
  EXPECT_THAT(targets_of(tests, "adamw.step", bin), IsEmpty());
}

TEST(ParseCtestJsonTest, CommandsAndFixtures) {
  const std::vector<TestInfo> tests = parse_ctest_json(R"({"tests": [
      {"name": "A", "command": ["/b/bin/a", "--flag"],
       "properties": [{"name": "FIXTURES_REQUIRED", "value": ["ckpt"]}]},
      {"name": "B", "properties": [{"name": "FIXTURES_SETUP", "value": ["ckpt", "data"]}]}]})");
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_THAT(tests[0].command, ElementsAre("/b/bin/a", "--flag"));
  EXPECT_THAT(tests[0].fixtures_required, ElementsAre("ckpt"));
  EXPECT_THAT(tests[1].fixtures_setup, ElementsAre("ckpt", "data"));
  EXPECT_THAT(tests[1].command, IsEmpty());
}

TEST(CheckBlankTreeTest, TiedTestsFailWithTheirMessageAndTheOthersPass) {
  const std::vector<TestInfo> tests = {
      {"Loop.a", {"core", "exercise:autograd.reverse_loop"}},
      {"Rms.a", {"ops", "needs:autograd.reverse_loop", "exercise:rms_norm.backward"}},
      {"Adam.a", {"nn", "exercise:adamw.step"}},
      {"Untied", {"core"}}};
  const std::string loop_message =
      "exercise autograd.reverse_loop is not implemented yet — see docs/course/02-autograd.md";
  const std::string adam_message =
      "exercise adamw.step is not implemented yet — see docs/course/14-optimizers.md";
  std::vector<TestResult> good = {{"Loop.a", "fail", loop_message},
                                  {"Rms.a", "fail", loop_message},  // an earlier exercise first
                                  {"Adam.a", "fail", adam_message},
                                  {"Untied", "run", ""}};
  EXPECT_THAT(check_blank_tree(kCourse, tests, good), IsEmpty());
  // A tied test whose fixture setup failed, and an untied test that skipped itself.
  std::vector<TestResult> also_good = good;
  also_good[2] = {"Adam.a", "notrun", "Failed test dependencies: Adam.setup"};
  also_good[3] = {"Untied", "notrun", "[  SKIPPED ] Untied"};
  EXPECT_THAT(check_blank_tree(kCourse, tests, also_good), IsEmpty());
  also_good[3] = {"Untied", "notrun", "Failed test dependencies: Other.setup"};
  EXPECT_THAT(check_blank_tree(kCourse, tests, also_good),
              ElementsAre("Untied: tied to no exercise, yet it did not pass (notrun): "));

  // A tied test that skipped itself ran no exercise code: a problem, with the skip's reason
  // (here, what CI lacked before scripts/setup.sh installed Graphviz).
  std::vector<TestResult> skipped = good;
  skipped[2] = {"Adam.a", "notrun",
                "tests/core/tape_print_test.cpp:233: Skipped\nGraphviz (dot) is not installed\n\n"
                "[  SKIPPED ] Adam.a (0 ms)"};
  EXPECT_THAT(check_blank_tree(kCourse, tests, skipped),
              ElementsAre("Adam.a: tied to adamw.step, but it skipped itself, so it checks none "
                          "of them: Graphviz (dot) is not installed"));
  skipped[2] = {"Adam.a", "notrun", ""};  // no reason given: the status stands in
  EXPECT_THAT(check_blank_tree(kCourse, tests, skipped),
              ElementsAre("Adam.a: tied to adamw.step, but it skipped itself, so it checks none "
                          "of them: notrun"));

  std::vector<TestResult> bad = good;
  bad[0] = {"Loop.a", "run", ""};
  bad[1] = {"Rms.a", "fail", adam_message};
  bad[2] = {"Adam.a", "fail", "x.cpp:9: Failure\nwrong value"};
  bad[3] = {"Untied", "fail", "y.cpp:1: Failure\nboom"};
  EXPECT_THAT(
      check_blank_tree(kCourse, tests, bad),
      ElementsAre("Loop.a: tied to autograd.reverse_loop, yet it passed with every exercise blank",
                  "Rms.a: tied to autograd.reverse_loop, rms_norm.backward, but it failed without "
                  "the NotImplemented message of one of them: exercise adamw.step (not tied)",
                  "Adam.a: tied to adamw.step, but it failed without the NotImplemented message "
                  "of one of them: x.cpp:9: wrong value",
                  "Untied: tied to no exercise, yet it did not pass (fail): y.cpp:1: boom"));

  // A test without a result, and an exercise no test runs.
  const std::vector<TestInfo> fewer = {tests[0], tests[3]};
  EXPECT_THAT(
      check_blank_tree(kCourse, fewer, {{"Loop.a", "fail", loop_message}}),
      ElementsAre("Untied: listed but has no result", "exercise rms_norm.backward: no test runs it",
                  "exercise adamw.step: no test runs it"));
}

}  // namespace
