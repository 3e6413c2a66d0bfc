// tests/nn/corpus_test.cpp — cleaning fortune files (escape codes, "%" separators, titles)
// and the verse statistics, on literal text and on Debian's Tang poems.
#include "nn/corpus.h"

#include <filesystem>

#include "nn/tokenizer.h"
#include "test_util.h"

namespace tg::nn {
namespace {

// Two entries in fortunes-zh's layout: a green title, a yellow author, the verses.
const std::string kTwoPoems =
    "\x1b[32m《春晓》\x1b[m\n"
    "\x1b[33m作者：孟浩然\x1b[m\n"
    "春眠不觉晓，处处闻啼鸟。\n"
    "夜来风雨声，花落知多少。\n"
    "%\n"
    "\x1b[32m《静夜思》\x1b[m\n"
    "\x1b[33m作者：李白\x1b[m\n"
    "床前明月光，疑是地上霜。\n"
    "%\n";

TEST(ParseFortunesTest, DropsTitlesAndEscapesByDefault) {
  EXPECT_EQ(parse_fortunes(kTwoPoems),
            (std::vector<std::string>{"春眠不觉晓，处处闻啼鸟。\n夜来风雨声，花落知多少。\n",
                                      "床前明月光，疑是地上霜。\n"}));
}

TEST(ParseFortunesTest, KeepsTitlesAsPlainText) {
  const std::vector<std::string> poems = parse_fortunes(kTwoPoems, {.keep_titles = true});
  ASSERT_EQ(poems.size(), 2u);
  EXPECT_EQ(poems[1], "《静夜思》\n作者：李白\n床前明月光，疑是地上霜。\n");
  for (const std::string& p : poems) EXPECT_EQ(p.find('\x1b'), std::string::npos);
}

TEST(ParseFortunesTest, SeparatorsBlankLinesAndOddEscapes) {
  // Only a line that is exactly "%" separates; blank lines at an entry's ends go, inner ones
  // stay; empty entries vanish; the text after the last "%" is an entry; a lone ESC goes.
  const std::string text =
      "\n\n100% sure\n\nline two\n\n%\n%\n\n%\nlast \x1b[1;31mred\x1b[0m and\x1b lone\nend";
  EXPECT_EQ(parse_fortunes(text, {.keep_titles = true}),
            (std::vector<std::string>{"100% sure\n\nline two\n", "last red and lone\nend\n"}));
  EXPECT_EQ(parse_fortunes(text),  // the escaped line dropped
            (std::vector<std::string>{"100% sure\n\nline two\n", "end\n"}));
  EXPECT_TRUE(parse_fortunes("").empty());
  EXPECT_TRUE(parse_fortunes("%\n%\n").empty());
}

TEST(ParseFortunesTest, MissingFileNamesThePackage) {
  EXPECT_TG_THROW(read_fortunes("/usr/share/games/fortunes/no-such-file"), ValueError,
                  "read_fortunes", "no-such-file", "apt-get install fortunes-zh");
  EXPECT_TG_THROW(read_fortunes("/nonexistent/poems"), ValueError, "cannot open");
}

TEST(VerseStatsTest, RegularLinesHaveClausesOfFiveOrSeven) {
  EXPECT_EQ(verse_stats("春眠不觉晓，处处闻啼鸟。\n").regular, 1);
  EXPECT_EQ(verse_stats("故人西辞黄鹤楼，烟花三月下扬州。\n").regular, 1);
  EXPECT_EQ(verse_stats("谁知林栖者，闻风坐相悦？\n").regular, 1);
  const VerseStats mixed = verse_stats(
      "春眠不觉晓，处处闻啼鸟鸟鸟。\n"  // 5 then 7: not one form
      "春眠不觉，处处闻啼。\n"          // 4 each
      "春眠不觉晓，处处闻啼鸟\n"        // no final mark
      "\n   \n"                         // blank: not counted
      "abcde，fghij。\n"                // not Chinese
      "兰叶春葳蕤，桂华秋皎洁。");      // no newline at the end: still a line
  EXPECT_EQ(mixed.lines, 5);
  EXPECT_EQ(mixed.regular, 1);
  EXPECT_DOUBLE_EQ(mixed.share(), 0.2);
  EXPECT_EQ(verse_stats("").lines, 0);
  EXPECT_EQ(verse_stats("").share(), 0.0);
  EXPECT_EQ(verse_stats("，。\n").regular, 0);
}

TEST(TangPoemsTest, TheDebianCorpusCleansUp) {
  if (!std::filesystem::exists(kTangPoemsPath)) GTEST_SKIP() << "apt-get install fortunes-zh";
  const std::vector<std::string> poems = read_fortunes(kTangPoemsPath);
  EXPECT_EQ(poems.size(), 313u);
  std::string all;
  for (const std::string& p : poems) all += p + "\n";
  EXPECT_EQ(all.find('\x1b'), std::string::npos);
  EXPECT_EQ(all.find("作者"), std::string::npos);
  EXPECT_EQ(poems[0].substr(0, poems[0].find('\n')), "兰叶春葳蕤，桂华秋皎洁。");
  EXPECT_GT(verse_stats(all).share(), 0.9);  // 94%: the poems are regular verse
  const std::vector<std::string> titled = read_fortunes(kTangPoemsPath, {.keep_titles = true});
  EXPECT_EQ(titled[0].substr(0, titled[0].find('\n')), "《感遇・其一》");
  EXPECT_LT(verse_stats(titled[0]).share(), 1.0);
}

}  // namespace
}  // namespace tg::nn
