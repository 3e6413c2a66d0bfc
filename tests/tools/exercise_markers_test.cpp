// tests/tools/exercise_markers_test.cpp — the registry and the blanking of tools/student_tree.
#include "tools/exercise_markers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "core/error.h"
#include "tools/exercise_hooks.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using tg::tools::blank_exercises;
using tg::tools::Exercise;
using tg::tools::exercises_from;
using tg::tools::parse_registry;
using tg::tools::probe_exercises;

const std::vector<Exercise> kCourse = {{"tape.reverse", "docs/course/02-autograd.md"},
                                       {"rms_norm.backward", "docs/course/06-rms-norm.md"},
                                       {"adamw.step", "docs/course/14-optimizers.md"}};

constexpr const char* kSource =
    "int f(int x) {\n"
    "  // exercise rms_norm.backward: begin\n"
    "  int y = x * 2;\n"
    "  return y;\n"
    "  // exercise rms_norm.backward: end\n"
    "}\n"
    "void g() {\n"
    "    // exercise adamw.step: begin\n"
    "    step();\n"
    "    // exercise adamw.step: end\n"
    "}\n";

TEST(ExerciseRegistryTest, ListsExercisesInOrderSkippingCommentsAndBlankLines) {
  const auto course = parse_registry(
      "# the course\n\ntape.reverse   docs/course/02-autograd.md\n"
      "rms_norm.backward\tdocs/course/06-rms-norm.md");
  ASSERT_EQ(course.size(), 2u);
  EXPECT_EQ(course[0].id, "tape.reverse");
  EXPECT_EQ(course[0].chapter, "docs/course/02-autograd.md");
  EXPECT_EQ(course[1].id, "rms_norm.backward");
  EXPECT_EQ(course[1].chapter, "docs/course/06-rms-norm.md");
}

TEST(ExerciseRegistryTest, RejectsMalformedLinesAndRepeatsNamingTheLine) {
  EXPECT_THAT([] { parse_registry("ok.one a.md\nBad-Id b.md\n"); },
              ThrowsMessage<tg::ValueError>(HasSubstr("line 2")));
  EXPECT_THAT([] { parse_registry("no_chapter\n"); },
              ThrowsMessage<tg::ValueError>(HasSubstr("expected \"<id> <chapter>\"")));
  EXPECT_THAT([] { parse_registry("a.b x.md\n\na.b y.md\n"); },
              ThrowsMessage<tg::ValueError>(HasSubstr("line 3: exercise a.b is listed twice")));
}

TEST(ExerciseRegistryTest, FromSelectsAnExerciseAndEveryOneAfterIt) {
  EXPECT_THAT(exercises_from(kCourse, ""),
              ElementsAre("adamw.step", "rms_norm.backward", "tape.reverse"));
  EXPECT_THAT(exercises_from(kCourse, "rms_norm.backward"),
              ElementsAre("adamw.step", "rms_norm.backward"));
  EXPECT_THAT([] { exercises_from(kCourse, "rmsnorm"); },
              ThrowsMessage<tg::ValueError>(HasSubstr("--from rmsnorm: no such exercise")));
}

TEST(BlankExercisesTest, ReplacesChosenBodiesAndKeepsEverythingElse) {
  std::vector<std::string> found;
  const std::string out = blank_exercises(kSource, "f.cpp", kCourse, {"rms_norm.backward"}, &found);
  EXPECT_EQ(out,
            "#include \"tools/exercise_hooks.h\"\n"
            "int f(int x) {\n"
            "  // exercise rms_norm.backward: begin\n"
            "  ::tg::detail::exercise_not_implemented(\"rms_norm.backward\", "
            "\"docs/course/06-rms-norm.md\");\n"
            "  // exercise rms_norm.backward: end\n"
            "}\n"
            "void g() {\n"
            "    // exercise adamw.step: begin\n"
            "    step();\n"
            "    // exercise adamw.step: end\n"
            "}\n");
  EXPECT_THAT(found, ElementsAre("rms_norm.backward", "adamw.step"));
}

TEST(BlankExercisesTest, TheHooksIncludeGoesBeforeTheFirstInclude) {
  const std::string source =
      "// x.cpp — a file\n#include \"x.h\"\n\n#include <cmath>\nvoid f() {\n"
      "  // exercise tape.reverse: begin\n  work();\n  // exercise tape.reverse: end\n}\n";
  EXPECT_EQ(blank_exercises(source, "x.cpp", kCourse, {"tape.reverse"}, nullptr),
            "// x.cpp — a file\n#include \"tools/exercise_hooks.h\"\n#include \"x.h\"\n\n"
            "#include <cmath>\nvoid f() {\n  // exercise tape.reverse: begin\n"
            "  ::tg::detail::exercise_not_implemented(\"tape.reverse\", "
            "\"docs/course/02-autograd.md\");\n"
            "  // exercise tape.reverse: end\n}\n");
}

TEST(BlankExercisesTest, NothingToBlankGivesTheSameBytes) {
  EXPECT_EQ(blank_exercises(kSource, "f.cpp", kCourse, {}, nullptr), kSource);
  const std::string no_final_newline =
      "a\n// exercise tape.reverse: begin\nb\n// exercise tape.reverse: end";
  EXPECT_EQ(blank_exercises(no_final_newline, "f.cpp", kCourse, {}, nullptr), no_final_newline);
}

TEST(BlankExercisesTest, MalformedMarkersAreNamedWithFileAndLine) {
  auto blank = [](const std::string& text) {
    return blank_exercises(text, "ops/x.cpp", kCourse, {"tape.reverse"}, nullptr);
  };
  EXPECT_THAT([&] { blank("x\n// exercise nope.nope: begin\n"); },
              ThrowsMessage<tg::ValueError>(HasSubstr(
                  "ops/x.cpp:2: exercise nope.nope is not listed in tools/exercises.txt")));
  EXPECT_THAT([&] { blank("// exercise tape.reverse: begin\nbody\n"); },
              ThrowsMessage<tg::ValueError>(
                  HasSubstr("ops/x.cpp:1: exercise tape.reverse begins here but never ends")));
  EXPECT_THAT([&] { blank("// exercise tape.reverse: end\n"); },
              ThrowsMessage<tg::ValueError>(
                  HasSubstr("ops/x.cpp:1: the end of exercise tape.reverse without its begin")));
  EXPECT_THAT(
      [&] {
        blank(
            "// exercise tape.reverse: begin\n// exercise adamw.step: begin\n"
            "// exercise adamw.step: end\n// exercise tape.reverse: end\n");
      },
      ThrowsMessage<tg::ValueError>(HasSubstr("ops/x.cpp:2: exercise adamw.step begins inside "
                                              "exercise tape.reverse (begun on line 1)")));
}

TEST(AnswerLinesTest, OnlyLinesThatComputeSomethingGiveASolutionAway) {
  EXPECT_TRUE(tg::tools::gives_away("out[i] += scale * grad[i] * mask[i];"));
  EXPECT_TRUE(tg::tools::gives_away("const F total = a * a / static_cast<F>(n);"));
  EXPECT_TRUE(tg::tools::gives_away("for (int64_t i = 0; i < n; ++i) out[i] += g[i] * y[i];"));
  EXPECT_FALSE(tg::tools::gives_away("for (int64_t r = 0; r < rows; ++r) {"));
  EXPECT_FALSE(tg::tools::gives_away("const F* xr = x + r * cols;"));
  EXPECT_FALSE(tg::tools::gives_away("const Edge& e = node.next_edges[i];"));
  EXPECT_FALSE(tg::tools::gives_away("const int64_t row = (b * n.H + h) * n.Tq + i;"));
  EXPECT_FALSE(tg::tools::gives_away("using C = ComputeType<T>;"));
  EXPECT_FALSE(tg::tools::gives_away("});"));
  EXPECT_FALSE(tg::tools::gives_away(
      "::tg::detail::exercise_not_implemented(\"rms_norm.backward\", \"docs/course/06.md\");"));
}

TEST(AnswerLinesTest, FindsEveryLineOfABlankedSolutionInAnotherFile) {
  std::map<std::string, std::set<std::string>> answers;
  tg::tools::collect_answer_lines(kSource, "f.cpp", kCourse, &answers);
  // kSource's bodies are short: only lines of 20 characters or more count.
  EXPECT_TRUE(answers.empty());
  const std::string source =
      "void g() {\n  // exercise adamw.step: begin\n  weight = weight - lr * m / denom;\n"
      "  // exercise adamw.step: end\n}\n";
  tg::tools::collect_answer_lines(source, "g.cpp", kCourse, &answers);
  ASSERT_EQ(answers.size(), 1u);
  const std::string doc = "text\n    weight = weight - lr * m / denom;   (the update)\n";
  EXPECT_THAT(tg::tools::find_answers(doc, "docs/x.md", answers, {"adamw.step"}),
              ElementsAre("docs/x.md:2: exercise adamw.step: weight = weight - lr * m / denom;"));
  // Only the blanked exercises count (a tree made with --from keeps the earlier ones).
  EXPECT_THAT(tg::tools::find_answers(doc, "docs/x.md", answers, {"rms_norm.backward"}),
              ::testing::IsEmpty());
}

TEST(ProbeExercisesTest, KeepsEveryBodyAndRecordsItFirst) {
  std::vector<std::string> found;
  EXPECT_EQ(probe_exercises(kSource, "f.cpp", kCourse, &found),
            "#include \"tools/exercise_hooks.h\"\n"
            "int f(int x) {\n"
            "  // exercise rms_norm.backward: begin\n"
            "  ::tg::detail::exercise_reached(\"rms_norm.backward\");\n"
            "  int y = x * 2;\n"
            "  return y;\n"
            "  // exercise rms_norm.backward: end\n"
            "}\n"
            "void g() {\n"
            "    // exercise adamw.step: begin\n"
            "    ::tg::detail::exercise_reached(\"adamw.step\");\n"
            "    step();\n"
            "    // exercise adamw.step: end\n"
            "}\n");
  EXPECT_THAT(found, ElementsAre("rms_norm.backward", "adamw.step"));
  EXPECT_THAT(
      [] { probe_exercises("// exercise tape.reverse: end\n", "ops/x.cpp", kCourse, nullptr); },
      ThrowsMessage<tg::ValueError>(
          HasSubstr("ops/x.cpp:1: the end of exercise tape.reverse without its begin")));
}

// The only test in this binary that calls exercise_reached: it reads the variable once.
TEST(ExerciseReachedTest, AppendsEachIdOnceToTheFileInTheEnvironment) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tapegrad_probe_" + std::to_string(::getpid()));
  std::filesystem::remove(file);
  std::ofstream(file) << "earlier.process\n";  // appended to, never truncated
  ::setenv("TAPEGRAD_EXERCISE_PROBE", file.c_str(), 1);
  tg::detail::exercise_reached("rms_norm.backward");
  tg::detail::exercise_reached("adamw.step");
  tg::detail::exercise_reached("rms_norm.backward");
  ::unsetenv("TAPEGRAD_EXERCISE_PROBE");
  std::ostringstream text;
  text << std::ifstream(file).rdbuf();
  EXPECT_EQ(text.str(), "earlier.process\nrms_norm.backward\nadamw.step\n");
  std::filesystem::remove(file);
}

TEST(TextHelpersTest, LinesTrimmingAndReadingFiles) {
  EXPECT_THAT(tg::tools::lines_of("a\n\nb\n"), ElementsAre("a", "", "b"));
  EXPECT_THAT(tg::tools::lines_of("a\nb"), ElementsAre("a", "b"));
  EXPECT_EQ(tg::tools::trimmed(" \t x y\r"), "x y");
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tapegrad_read_" + std::to_string(::getpid()));
  std::ofstream(file, std::ios::binary) << "one\ntwo";
  EXPECT_EQ(tg::tools::read_file(file.string()), "one\ntwo");
  std::filesystem::remove(file);
  EXPECT_THAT([&] { tg::tools::read_file(file.string()); },
              ThrowsMessage<tg::ValueError>(HasSubstr("cannot read " + file.string())));
}

TEST(ExerciseNotImplementedTest, NamesTheExerciseAndItsChapterInBothLanguages) {
  EXPECT_THAT(
      [] {
        tg::detail::exercise_not_implemented("rms_norm.backward", "docs/course/06-rms-norm.md");
      },
      ThrowsMessage<tg::NotImplemented>(
          "exercise rms_norm.backward is not implemented yet — see docs/course/06-rms-norm.md "
          "(中文: docs/course/zh/06-rms-norm.md)"));
  // Every chapter of the registry has its Chinese twin, which the message names.
  const std::vector<tg::tools::Exercise> course = tg::tools::parse_registry(
      tg::tools::read_file(std::string(TAPEGRAD_SOURCE_DIR) + "/tools/exercises.txt"));
  for (const tg::tools::Exercise& e : course) {
    const std::string zh = tg::detail::chinese_chapter(e.chapter);
    EXPECT_NE(zh, e.chapter);
    EXPECT_TRUE(std::filesystem::exists(std::string(TAPEGRAD_SOURCE_DIR) + "/" + zh)) << zh;
  }
}

}  // namespace
