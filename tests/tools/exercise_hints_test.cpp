// tests/tools/exercise_hints_test.cpp — the course's hints: the file's rules, one hint
// unlocked per call, and the real tools/hints.txt covering every exercise in both languages.
#include "tools/exercise_hints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ThrowsMessage;
using namespace tg::tools;

const std::vector<Exercise> kCourse = {{"relu.forward_backward", "docs/course/05-activations.md"},
                                       {"rms_norm.forward", "docs/course/06-rms-norm.md"}};

const std::string kHints =
    "# comment\n"
    "[relu.forward_backward]\n"
    "en: first relu\n"
    "zh: 第一\n"
    "en: second relu\n"
    "zh: 第二\n"
    "\n"
    "[rms_norm.forward]\n"
    "en: one\n"
    "zh: 一\n"
    "en: two\n"
    "zh: 二\n"
    "en: three\n"
    "zh: 三\n";

TEST(ParseHintsTest, ReadsEachExercisesHintsInOrder) {
  const auto hints = parse_hints(kHints, kCourse);
  ASSERT_EQ(hints.at("rms_norm.forward").size(), 3u);
  EXPECT_EQ(hints.at("rms_norm.forward")[2].en, "three");
  EXPECT_EQ(hints.at("rms_norm.forward")[2].zh, "三");
  EXPECT_EQ(hints.at("relu.forward_backward")[0].en, "first relu");
}

TEST(ParseHintsTest, RefusesWhatIsMalformedNamingTheLine) {
  auto fails = [](const std::string& text, const std::string& what) {
    EXPECT_THAT([&] { parse_hints(text, kCourse); }, ThrowsMessage<tg::ValueError>(HasSubstr(what)))
        << text;
  };
  const std::string rest = "[rms_norm.forward]\nen: a\nzh: 甲\nen: b\nzh: 乙\n";
  fails("[relu.forward_backward]\nen: a\nen: b\nzh: x\n" + rest,
        "line 3: the hint before it has no 'zh:' line");
  fails("[relu.forward_backward]\nzh: a\n" + rest, "line 2: a 'zh:' line without its 'en:'");
  fails("en: a\nzh: b\n", "line 1: a hint before any [exercise] line");
  fails("[nope]\n", "line 1: exercise 'nope' is not in tools/exercises.txt");
  fails(rest + rest, "line 6: exercise 'rms_norm.forward' appears twice");
  fails("[relu.forward_backward\n", "line 1: '[relu.forward_backward' has no closing ']'");
  fails("[relu.forward_backward]\nen:   \n", "line 2: an empty hint");
  fails("[relu.forward_backward]\nfr: bonjour\n", "line 2: expected '[exercise]'");
  fails("[relu.forward_backward]\nen: a\nzh: 甲\n" + rest,
        "exercise relu.forward_backward has 1 hints; every exercise needs at least 2");
  fails(rest, "exercise relu.forward_backward has 0 hints");
  fails("[relu.forward_backward]\nen: a\nzh: 甲\nen: b\nzh: 乙\n" + rest + "en: c\n",
        "the last hint has no 'zh:' line");
}

TEST(NextHintTest, UnlocksOneMoreEachCallInTheLearnersLanguage) {
  const auto hints = parse_hints(kHints, kCourse);
  const std::string state =
      (std::filesystem::temp_directory_path() / "tapegrad_hint_test" / "rms_norm.forward").string();
  std::filesystem::remove(state);
  const std::string first = next_hint(hints, "rms_norm.forward", Lang::kEnglish, state);
  EXPECT_EQ(first,
            "hint 1/3: one\n2 more: run scripts/hint.sh rms_norm.forward again to "
            "unlock the next.\n");
  const std::string second = next_hint(hints, "rms_norm.forward", Lang::kChinese, state);
  EXPECT_THAT(second, HasSubstr("提示 1/3: 一\n提示 2/3: 二\n还有 1 个提示"));
  EXPECT_THAT(second, Not(HasSubstr("三")));
  const std::string third = next_hint(hints, "rms_norm.forward", Lang::kEnglish, state);
  EXPECT_THAT(third, HasSubstr("hint 3/3: three\nThat was the last hint."));
  // Asking again repeats them all: nothing past the last.
  EXPECT_EQ(next_hint(hints, "rms_norm.forward", Lang::kEnglish, state), third);
  EXPECT_THAT([&] { next_hint(hints, "nope", Lang::kEnglish, state); },
              ThrowsMessage<tg::ValueError>(HasSubstr("no hints for exercise 'nope'")));
  std::filesystem::remove_all(std::filesystem::path(state).parent_path());
}

TEST(RealHintsTest, EveryExerciseHasHintsInBothLanguages) {
  const std::string root = TAPEGRAD_SOURCE_DIR;
  const std::vector<Exercise> course = parse_registry(read_file(root + "/tools/exercises.txt"));
  const auto hints = parse_hints(read_file(root + "/tools/hints.txt"), course);
  for (const Exercise& e : course) {
    for (const Hint& h : hints.at(e.id)) {
      EXPECT_FALSE(h.en.empty()) << e.id;
      EXPECT_FALSE(h.zh.empty()) << e.id;
      EXPECT_NE(h.en, h.zh) << e.id << ": the Chinese hint is the English one";
    }
  }
}

}  // namespace
