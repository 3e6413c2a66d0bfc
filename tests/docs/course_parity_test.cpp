// tests/docs/course_parity_test.cpp — the English and Chinese course cannot drift apart.
//
// docs/course/ and docs/course/zh/ must hold the same files. Every chapter (NN-name.md), in
// both languages, has the same eight sections in the same order (each language with its own
// headings, kSections below), the same number of ### and #### subsections in each section,
// and the same fenced code blocks, byte for byte, in the same sections: the code is what the
// build checks (tests/docs/docs_test.cpp), so a translation may change only the prose. The
// same goes for the figures (![caption](../images/course/NAME.svg), made by
// scripts/figures.sh): the same images in the same order in the same sections, each language
// with its own caption. The guides (README.md) need the same code blocks and figures. Every
// relative link in either language must name a file that exists. The checker is tested
// first on small in-memory chapters.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The eight sections of every chapter, English and Chinese, in order.
constexpr std::array<std::string_view, 8> kSections = {
    "Why this piece exists", "The math", "The backward derivation",
    "Code walkthrough",      "Pitfalls", "The exercise and its tests",
    "Check yourself",        "Answers"};
constexpr std::array<std::string_view, 8> kSectionsZh = {
    "为什么需要它", "数学", "反向传播推导", "代码导读", "常见陷阱", "练习与测试", "自测题", "答案"};

/// A markdown file cut into sections at its "## " headings (section 0 is what comes before
/// the first one). Fenced blocks are skipped when looking for headings.
struct Section {
  std::string heading;              // "" for the part before the first "## "
  int subsections = 0;              // "### " and "#### " headings inside it
  std::vector<std::string> blocks;  // its fenced blocks, fences included
  std::vector<std::string> images;  // its images' paths without leading "../" (see image_paths)
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string_view fence_of(std::string_view line) {
  const size_t b = line.find_first_not_of(' ');
  if (b == std::string_view::npos || b > 3) return {};
  line.remove_prefix(b);
  if (line.starts_with("```")) return "```";
  if (line.starts_with("~~~")) return "~~~";
  return {};
}

/// The images a line shows, `![caption](path)`, as paths without their leading "../": the
/// English chapters sit one folder above the Chinese ones, so "../images/course/x.svg" and
/// "../../images/course/x.svg" are the same figure, "images/course/x.svg".
std::vector<std::string> image_paths(const std::string& line) {
  std::vector<std::string> paths;
  for (size_t at = line.find("!["); at != std::string::npos; at = line.find("![", at + 2)) {
    const size_t open = line.find("](", at + 2);
    const size_t close = open == std::string::npos ? open : line.find(')', open + 2);
    if (close == std::string::npos) break;
    std::string path = line.substr(open + 2, close - open - 2);
    while (path.starts_with("../")) path.erase(0, 3);
    paths.push_back(path);
  }
  return paths;
}

std::vector<Section> sections_of(const std::string& text) {
  std::vector<Section> out(1);
  std::string block;
  std::string_view open;  // the fence of the block we are in
  for (const std::string& line : lines_of(text)) {
    if (!open.empty()) {
      block += line + "\n";
      if (fence_of(line) == open && line.find_first_not_of(" `~") == std::string::npos) {
        out.back().blocks.push_back(block);
        open = {};
      }
      continue;
    }
    if (!fence_of(line).empty()) {
      open = fence_of(line);
      block = line + "\n";
    } else if (line.starts_with("## ")) {
      out.push_back({line.substr(3), 0, {}, {}});
    } else if (line.starts_with("### ") || line.starts_with("#### ")) {
      ++out.back().subsections;
    } else {
      for (std::string& image : image_paths(line)) out.back().images.push_back(std::move(image));
    }
  }
  if (!open.empty()) out.back().blocks.push_back(block + "(never closed)\n");
  return out;
}

/// The differences between an English chapter and its Chinese twin (empty: none).
/// `chapter` says whether the eight-section rule applies (not for the README guides).
std::vector<std::string> compare(const std::string& en_text, const std::string& zh_text,
                                 bool chapter) {
  std::vector<std::string> problems;
  const std::vector<Section> en = sections_of(en_text), zh = sections_of(zh_text);
  if (chapter) {
    for (const auto& [doc, names, language] :
         {std::tuple{&en, &kSections, "English"}, std::tuple{&zh, &kSectionsZh, "Chinese"}}) {
      std::vector<std::string> got;
      for (size_t i = 1; i < doc->size(); ++i) got.push_back((*doc)[i].heading);
      if (got != std::vector<std::string>(names->begin(), names->end())) {
        problems.push_back(fmt::format("the {} sections are [{}], not [{}]", language,
                                       fmt::join(got, " | "), fmt::join(*names, " | ")));
      }
    }
    if (!problems.empty()) return problems;
    for (size_t i = 0; i < en.size(); ++i) {
      if (en[i].subsections != zh[i].subsections) {
        problems.push_back(fmt::format("section '{}': {} subsections in English, {} in Chinese",
                                       en[i].heading, en[i].subsections, zh[i].subsections));
      }
      if (en[i].blocks != zh[i].blocks) {
        problems.push_back(fmt::format(
            "section '{}': its code blocks differ ({} in English, {} in Chinese{})", en[i].heading,
            en[i].blocks.size(), zh[i].blocks.size(),
            en[i].blocks.size() == zh[i].blocks.size() ? ", not byte for byte the same" : ""));
      }
      if (en[i].images != zh[i].images) {
        problems.push_back(fmt::format(
            "section '{}': its figures differ ([{}] in English, [{}] in Chinese)", en[i].heading,
            fmt::join(en[i].images, ", "), fmt::join(zh[i].images, ", ")));
      }
    }
    return problems;
  }
  std::vector<std::string> en_blocks, zh_blocks, en_images, zh_images;
  for (const Section& s : en) {
    en_blocks.insert(en_blocks.end(), s.blocks.begin(), s.blocks.end());
    en_images.insert(en_images.end(), s.images.begin(), s.images.end());
  }
  for (const Section& s : zh) {
    zh_blocks.insert(zh_blocks.end(), s.blocks.begin(), s.blocks.end());
    zh_images.insert(zh_images.end(), s.images.begin(), s.images.end());
  }
  if (en_blocks != zh_blocks) {
    problems.push_back(fmt::format("the code blocks differ ({} in English, {} in Chinese)",
                                   en_blocks.size(), zh_blocks.size()));
  }
  if (en_images != zh_images) {
    problems.push_back(fmt::format("the figures differ ([{}] in English, [{}] in Chinese)",
                                   fmt::join(en_images, ", "), fmt::join(zh_images, ", ")));
  }
  return problems;
}

/// Relative link targets of a markdown text, outside fenced blocks, without "#anchor".
std::vector<std::string> relative_links(const std::string& text) {
  std::vector<std::string> links;
  std::string_view open;
  for (const std::string& line : lines_of(text)) {
    if (!fence_of(line).empty()) {
      open = open.empty() ? fence_of(line) : std::string_view{};
      continue;
    }
    if (!open.empty()) continue;
    for (size_t at = line.find("]("); at != std::string::npos; at = line.find("](", at + 2)) {
      const size_t end = line.find(')', at + 2);
      if (end == std::string::npos) break;
      std::string target = line.substr(at + 2, end - at - 2);
      target = target.substr(0, target.find('#'));
      if (target.empty() || target.find("://") != std::string::npos ||
          target.starts_with("mailto:")) {
        continue;
      }
      links.push_back(target);
    }
  }
  return links;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string chapter_text(std::string_view title, const std::array<std::string_view, 8>& names,
                         std::string_view code) {
  std::string t = fmt::format("# {}\n\nintro\n", title);
  for (std::string_view n : names) t += fmt::format("\n## {}\n\ntext\n", n);
  t += fmt::format("\n### sub\n\n```cpp\n{}\n```\n", code);  // in "Answers"
  return t;
}

// ---- the checker, on small chapters

TEST(CourseParityCheckerTest, AcceptsAFaithfulTranslation) {
  EXPECT_THAT(compare(chapter_text("Chapter 1", kSections, "int x = 1;"),
                      chapter_text("第 1 章", kSectionsZh, "int x = 1;"), true),
              ::testing::IsEmpty());
}

TEST(CourseParityCheckerTest, FindsDriftInCodeSubsectionsAndSections) {
  const std::string en = chapter_text("Chapter 1", kSections, "int x = 1;");
  EXPECT_THAT(
      compare(en, chapter_text("第 1 章", kSectionsZh, "int x = 2;"), true),
      ::testing::ElementsAre("section 'Answers': its code blocks differ (1 in English, 1 in "
                             "Chinese, not byte for byte the same)"));
  std::string zh = chapter_text("第 1 章", kSectionsZh, "int x = 1;");
  zh.replace(zh.find("### sub"), 7, "sub");
  EXPECT_THAT(compare(en, zh, true),
              ::testing::ElementsAre("section 'Answers': 1 subsections in English, 0 in Chinese"));
  zh = chapter_text("第 1 章", kSectionsZh, "int x = 1;");
  const std::string math = "## 数学\n";
  zh.replace(zh.find(math), math.size(), "## 数学原理\n");
  EXPECT_THAT(compare(en, zh, true), ::testing::ElementsAre(::testing::HasSubstr(
                                         "the Chinese sections are [为什么需要它 | "
                                         "数学原理 | ")));
  // A code block in another section counts as drift too.
  std::string moved = en;
  moved.replace(moved.find("## The math\n\ntext\n"), 18, "## The math\n\n```sh\nls\n```\n");
  EXPECT_THAT(compare(moved, zh, false),
              ::testing::ElementsAre("the code blocks differ (2 in English, 1 in Chinese)"));
  // "## " inside a fenced block is code, not a heading.
  EXPECT_EQ(sections_of("a\n```sh\n## not a heading\n```\n## Real\n").size(), 2u);
}

// A chapter made by chapter_text with the line `figure` added to its section names[index].
std::string with_figure(std::string chapter, const std::array<std::string_view, 8>& names,
                        size_t index, const std::string& figure) {
  const std::string heading = fmt::format("## {}\n\ntext\n", names[index]);
  chapter.insert(chapter.find(heading) + heading.size(), "\n" + figure + "\n");
  return chapter;
}

TEST(CourseParityCheckerTest, RequiresTheSameFiguresInTheSameSections) {
  const std::string en = with_figure(chapter_text("Chapter 1", kSections, "int x = 1;"), kSections,
                                     1, "![strides of x](../images/course/01-strides.svg)");
  const std::string zh_plain = chapter_text("第 1 章", kSectionsZh, "int x = 1;");
  // The same figure, one folder deeper and with its own caption: faithful.
  EXPECT_THAT(compare(en,
                      with_figure(zh_plain, kSectionsZh, 1,
                                  "![x 的步长](../../images/course/01-strides.svg)"),
                      true),
              ::testing::IsEmpty());
  // Left out of the translation.
  EXPECT_THAT(compare(en, zh_plain, true),
              ::testing::ElementsAre("section 'The math': its figures differ "
                                     "([images/course/01-strides.svg] in English, [] in Chinese)"));
  // Shown in another section.
  EXPECT_THAT(compare(en,
                      with_figure(zh_plain, kSectionsZh, 3,
                                  "![x 的步长](../../images/course/01-strides.svg)"),
                      true),
              ::testing::ElementsAre(
                  ::testing::HasSubstr("section 'The math': its figures differ"),
                  ::testing::HasSubstr("section 'Code walkthrough': its figures differ "
                                       "([] in English, [images/course/01-strides.svg]")));
  // Another figure, and the guides' rule (no sections) on the same pair.
  const std::string other =
      with_figure(zh_plain, kSectionsZh, 1, "![x 的步长](../../images/course/01-broadcast.svg)");
  EXPECT_THAT(compare(en, other, true), ::testing::SizeIs(1));
  EXPECT_THAT(compare(en, other, false),
              ::testing::ElementsAre("the figures differ ([images/course/01-strides.svg] in "
                                     "English, [images/course/01-broadcast.svg] in Chinese)"));
  // An image inside a fenced block is code, not a figure; two on one line are two figures.
  EXPECT_THAT(sections_of("```md\n![a](x.svg)\n```\n")[0].images, ::testing::IsEmpty());
  EXPECT_THAT(image_paths("![a](../../images/a.svg) and ![b](b.svg)"),
              ::testing::ElementsAre("images/a.svg", "b.svg"));
}

TEST(CourseParityCheckerTest, FindsRelativeLinksOutsideCode) {
  EXPECT_THAT(relative_links("see [a](../../ops/x.cpp#L3), [b](https://x.org), [c](#top)\n"
                             "```sh\n[d](nope.md)\n```\n[e](02-autograd.md)\n"),
              ::testing::ElementsAre("../../ops/x.cpp", "02-autograd.md"));
}

// ---- the real course

const fs::path kCourse = fs::path(TAPEGRAD_SOURCE_DIR) / "docs" / "course";

std::vector<std::string> markdown_names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".md") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CourseParityTest, BothLanguagesHaveTheSameChapters) {
  const std::vector<std::string> en = markdown_names(kCourse);
  EXPECT_GE(en.size(), 18u);  // 17 chapters and the guide
  EXPECT_EQ(en, markdown_names(kCourse / "zh"));
}

TEST(CourseParityTest, SameSectionsSubsectionsCodeBlocksAndFigures) {
  for (const std::string& name : markdown_names(kCourse)) {
    if (!fs::exists(kCourse / "zh" / name)) continue;  // reported by the test above
    const bool chapter = name != "README.md";
    for (const std::string& p :
         compare(read(kCourse / name), read(kCourse / "zh" / name), chapter)) {
      ADD_FAILURE() << "docs/course/" << name << " vs docs/course/zh/" << name << ": " << p;
    }
  }
}

/// True for a link into the fast kernels (ops/fast/, nn/fast/ and their tests) in a tree
/// that has none: a student tree leaves them out on purpose (tools/student_tree.cpp).
bool left_out_of_this_tree(const fs::path& target) {
  const fs::path root = fs::weakly_canonical(fs::path(TAPEGRAD_SOURCE_DIR));
  if (fs::exists(root / "ops" / "fast")) return false;
  const std::string rel = fs::relative(fs::weakly_canonical(target), root).generic_string();
  for (const char* folder : {"ops/fast", "nn/fast", "tests/ops/fast", "tests/nn/fast"}) {
    if (rel == folder || rel.starts_with(std::string(folder) + "/")) return true;
  }
  return false;
}

TEST(CourseParityTest, EveryRelativeLinkResolves) {
  for (const fs::path& dir : {kCourse, kCourse / "zh"}) {
    for (const std::string& name : markdown_names(dir)) {
      for (const std::string& link : relative_links(read(dir / name))) {
        if (left_out_of_this_tree(dir / link)) continue;
        EXPECT_TRUE(fs::exists(dir / link))
            << fs::relative(dir / name, TAPEGRAD_SOURCE_DIR).string() << ": link '" << link
            << "' names no file";
      }
    }
  }
}

}  // namespace
