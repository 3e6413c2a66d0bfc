// tests/docs/docs_test.cpp — every snippet in README.md and docs/**/*.md is real.
//
// The docs promise that every C++ snippet they show is a file the build compiles, and that
// every program output they show is what the program prints today. This test keeps that
// promise by checking two kinds of fenced block:
//
//   * A C++ block (```cpp, also c++ cc cxx h hpp hxx) must start with the line
//         // file: <path relative to the repository root>
//     and its whole content, that line included, must equal the file byte for byte. The
//     file itself therefore starts with the same marker line.
//   * A ```text block whose first line is
//         $ build/bin/<program>
//     shows that program's output: the test runs <bin dir>/<program> without arguments,
//     from the repository root, and compares its stdout with the rest of the block. A
//     program that is missing (not built) or exits with an error fails the test.
//
// Other blocks (cmake, shell commands, text without a "$ build/bin/" line) are not checked.
// Each failure names the markdown file and line, the file or program, and the first
// line that differs. The parser itself is tested below on in-memory markdown, including
// blocks that are deliberately wrong, so we know the check can fail.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFileMarker = "// file: ";
constexpr std::string_view kRunMarker = "$ build/bin/";

// ---- parsing: fenced code blocks

/// One fenced code block of a markdown file.
struct Block {
  std::string lang;                // first word of the info string, in lower case
  size_t line = 0;                 // 1-based line of the opening fence
  std::vector<std::string> lines;  // the content, with the fence's indentation removed
};

struct Parsed {
  std::vector<Block> blocks;
  std::vector<std::string> errors;  // without the file name; check_markdown adds it
};

/// Splits on '\n'. "a\nb\n" gives {"a", "b", ""}: the last element is what follows the
/// last newline, so two texts are equal exactly when their splits are.
std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      out.emplace_back(text.substr(start));
      return out;
    }
    out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
}

size_t leading_spaces(std::string_view s) {
  const size_t n = s.find_first_not_of(' ');
  return n == std::string_view::npos ? s.size() : n;
}

std::string_view trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

/// Finds the fenced blocks (``` or ~~~, three or more, any indentation) as CommonMark
/// does: a block closes at a line holding only a run of the same fence character at least
/// as long as the opening one, so a ```` block can show ``` lines inside it.
Parsed parse_fences(std::string_view markdown) {
  Parsed parsed;
  const std::vector<std::string> lines = split_lines(markdown);
  bool open = false;
  char fence_char = 0;
  size_t fence_len = 0, indent = 0;
  Block block;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const size_t spaces = leading_spaces(line);
    const std::string_view rest = line.substr(spaces);
    if (!open) {
      if (!rest.starts_with("```") && !rest.starts_with("~~~")) continue;
      const char c = rest[0];
      const size_t run = std::min(rest.find_first_not_of(c), rest.size());
      const std::string_view info = trim(rest.substr(run));
      if (c == '`' && info.find('`') != std::string_view::npos) continue;  // inline code
      std::string lang(info.substr(0, std::min(info.find_first_of(" \t{"), info.size())));
      std::transform(lang.begin(), lang.end(), lang.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      block = Block{std::move(lang), i + 1, {}};
      open = true;
      fence_char = c;
      fence_len = run;
      indent = spaces;
      continue;
    }
    const size_t run = std::min(rest.find_first_not_of(fence_char), rest.size());
    if (run >= fence_len && trim(rest.substr(run)).empty()) {
      parsed.blocks.push_back(std::move(block));
      open = false;
      continue;
    }
    block.lines.emplace_back(line.substr(std::min(spaces, indent)));
  }
  if (open) {
    parsed.errors.push_back(
        fmt::format("{}: the {} block opened here is never closed", block.line,
                    block.lang.empty() ? std::string("fenced") : "```" + block.lang));
  }
  return parsed;
}

// ---- comparing texts

/// A line for a failure message: quoted, with control characters made visible.
std::string show_line(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += fmt::format("\\{}", c);
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", c);
    else out += c;
  }
  return out + "\"";
}

struct Difference {
  size_t line;  // 1-based, within the compared texts
  std::string expected, actual;
};

/// Where `actual` first departs from `expected`, described line by line; nullopt if equal.
std::optional<Difference> first_difference(std::string_view expected, std::string_view actual) {
  if (expected == actual) return std::nullopt;
  const auto e = split_lines(expected), a = split_lines(actual);
  size_t i = 0;
  while (i < e.size() && i < a.size() && e[i] == a[i]) ++i;
  // split_lines ends with what follows the last newline, "" for a text ending in one.
  auto describe = [](const std::vector<std::string>& lines, size_t k) -> std::string {
    if (k >= lines.size()) return "the end of the text (no newline at the end)";
    if (k + 1 == lines.size() && lines[k].empty()) return "the end of the text";
    return show_line(lines[k]);
  };
  return Difference{i + 1, describe(e, i), describe(a, i)};
}

std::string join_lines(const std::vector<std::string>& lines, size_t first) {
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

// ---- running programs

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct RunResult {
  std::string output;  // stdout; stderr goes to the test's own stderr
  int status;          // exit code, or -1 if the program did not exit normally
};

/// Runs `program` with no arguments and stdin from /dev/null, in `cwd`.
RunResult run_program(const fs::path& program, const fs::path& cwd) {
  const std::string command = fmt::format("cd {} && exec {} </dev/null", shell_quote(cwd.string()),
                                          shell_quote(program.string()));
  std::fflush(nullptr);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  RunResult result{"", -1};
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int wait_status = pclose(pipe);
  if (wait_status != -1 && WIFEXITED(wait_status)) result.status = WEXITSTATUS(wait_status);
  return result;
}

// ---- checking one markdown file

struct Dirs {
  fs::path source;  // the repository root: paths in "// file:" lines are relative to it
  fs::path bin;     // where the build puts executables (build/bin)
};

struct Report {
  std::vector<std::string> failures;
  int files_checked = 0;    // C++ blocks compared with their file
  int outputs_checked = 0;  // text blocks compared with a program's output
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_cpp(std::string_view lang) {
  for (const std::string_view l : {"cpp", "c++", "cc", "cxx", "h", "hpp", "hxx"}) {
    if (lang == l) return true;
  }
  return false;
}

// A path from a marker line must stay inside the repository.
bool is_safe_relative(const fs::path& p) {
  if (p.empty() || p.is_absolute()) return false;
  for (const auto& part : p) {
    if (part == "..") return false;
  }
  return true;
}

void check_cpp_block(const Block& b, std::string_view md, const Dirs& dirs, Report& r) {
  const std::string where = fmt::format("{}:{}", md, b.line);
  if (b.lines.empty() || !b.lines[0].starts_with(kFileMarker)) {
    r.failures.push_back(fmt::format(
        "{}: a ```{} block must start with a line \"// file: <path>\" naming the file it shows "
        "(every C++ snippet must be a file the build compiles); its first line is {}",
        where, b.lang, b.lines.empty() ? "missing (empty block)" : show_line(b.lines[0])));
    return;
  }
  const std::string name(trim(std::string_view(b.lines[0]).substr(kFileMarker.size())));
  const fs::path rel(name);
  if (!is_safe_relative(rel)) {
    r.failures.push_back(fmt::format(
        "{}: \"// file: {}\" must name a path relative to the repository root", where, name));
    return;
  }
  const fs::path path = dirs.source / rel;
  if (!fs::is_regular_file(path)) {
    r.failures.push_back(fmt::format("{}: the block shows {}, which does not exist (looked for {})",
                                     where, name, path.string()));
    return;
  }
  ++r.files_checked;
  if (const auto d = first_difference(join_lines(b.lines, 0), read_file(path))) {
    r.failures.push_back(fmt::format(
        "{}: the block differs from {} at line {} of the file (line {} of {}): the block has "
        "{}, the file has {}",
        where, name, d->line, b.line + d->line, md, d->expected, d->actual));
  }
}

void check_output_block(const Block& b, std::string_view md, const Dirs& dirs, Report& r) {
  const std::string where = fmt::format("{}:{}", md, b.line);
  const std::string program(trim(std::string_view(b.lines[0]).substr(kRunMarker.size())));
  const bool plain_name =
      !program.empty() && std::all_of(program.begin(), program.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '+';
      });
  if (!plain_name || program.starts_with(".")) {
    r.failures.push_back(fmt::format(
        "{}: {} must be \"$ build/bin/<program>\" with a plain program name and no arguments",
        where, show_line(b.lines[0])));
    return;
  }
  const fs::path exe = dirs.bin / program;
  if (!fs::is_regular_file(exe)) {
    r.failures.push_back(
        fmt::format("{}: build/bin/{} is not built ({} does not exist); register it with "
                    "tapegrad_add_example and build it",
                    where, program, exe.string()));
    return;
  }
  ++r.outputs_checked;
  const RunResult run = run_program(exe, dirs.source);
  if (run.status != 0) {
    r.failures.push_back(
        fmt::format("{}: build/bin/{} failed (exit status {}); its output was:\n{}", where, program,
                    run.status, run.output));
    return;
  }
  if (const auto d = first_difference(join_lines(b.lines, 1), run.output)) {
    r.failures.push_back(fmt::format(
        "{}: the output of build/bin/{} differs from the block at output line {} (line {} of "
        "{}): the block has {}, the program printed {}",
        where, program, d->line, b.line + 1 + d->line, md, d->expected, d->actual));
  }
}

/// Checks every block of one markdown text; `md` is its name for the failure messages.
Report check_markdown(std::string_view markdown, std::string_view md, const Dirs& dirs) {
  Report report;
  const Parsed parsed = parse_fences(markdown);
  for (const std::string& e : parsed.errors) report.failures.push_back(fmt::format("{}:{}", md, e));
  for (const Block& b : parsed.blocks) {
    if (is_cpp(b.lang)) {
      check_cpp_block(b, md, dirs, report);
    } else if (b.lang == "text" && !b.lines.empty() && b.lines[0].starts_with(kRunMarker)) {
      check_output_block(b, md, dirs, report);
    }
  }
  return report;
}

/// README.md (if present) and every .md file under docs/, as paths relative to `source`.
std::vector<fs::path> markdown_files(const fs::path& source) {
  std::vector<fs::path> out;
  if (fs::is_regular_file(source / "README.md")) out.emplace_back("README.md");
  if (fs::is_directory(source / "docs")) {
    for (const auto& entry : fs::recursive_directory_iterator(source / "docs")) {
      if (entry.is_regular_file() && entry.path().extension() == ".md") {
        out.push_back(fs::relative(entry.path(), source));
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Dirs project_dirs() { return {TAPEGRAD_SOURCE_DIR, TAPEGRAD_BIN_DIR}; }

// ---- the real docs

TEST(DocsTest, EverySnippetIsItsFileAndEveryOutputIsReal) {
  // One test, not two: the course programs write files (a checkpoint in the temporary
  // directory), so two tests running them at once under `ctest -j` would race.
  const Dirs dirs = project_dirs();
  const std::vector<fs::path> files = markdown_files(dirs.source);
  // Guards against a checker that passes because it looked in the wrong place.
  EXPECT_NE(std::find(files.begin(), files.end(), fs::path("docs/architecture.md")), files.end());
  int checked_files = 0, checked_outputs = 0;
  for (const fs::path& md : files) {
    const Report r = check_markdown(read_file(dirs.source / md), md.generic_string(), dirs);
    fmt::print("{}: {} C++ blocks and {} program outputs checked\n", md.generic_string(),
               r.files_checked, r.outputs_checked);
    for (const std::string& failure : r.failures) ADD_FAILURE() << failure;
    checked_files += r.files_checked;
    checked_outputs += r.outputs_checked;
  }
  EXPECT_GT(checked_files, 0);
  EXPECT_GT(checked_outputs, 0);
}

// ---- the parser and the checks, on in-memory markdown

TEST(DocsParserTest, FindsFencedBlocksWithTheirLinesAndLanguages) {
  const std::string md =
      "# Title\n"           // 1
      "```cpp\n"            // 2
      "int x;\n"            // 3
      "```\n"               // 4
      "- item\n"            // 5
      "  ~~~ Text extra\n"  // 6
      "  a\n"               // 7
      "   b\n"              // 8
      "  ~~~\n"             // 9
      "````markdown\n"      // 10
      "```cpp\n"            // 11
      "```\n"               // 12
      "````\n"              // 13
      "Inline ```code``` is not a fence.\n";
  const Parsed p = parse_fences(md);
  EXPECT_TRUE(p.errors.empty());
  ASSERT_EQ(p.blocks.size(), 3u);
  EXPECT_EQ(p.blocks[0].lang, "cpp");
  EXPECT_EQ(p.blocks[0].line, 2u);
  EXPECT_EQ(p.blocks[0].lines, std::vector<std::string>{"int x;"});
  EXPECT_EQ(p.blocks[1].lang, "text");
  EXPECT_EQ(p.blocks[1].line, 6u);
  EXPECT_EQ(p.blocks[1].lines, (std::vector<std::string>{"a", " b"}));
  EXPECT_EQ(p.blocks[2].lang, "markdown");
  EXPECT_EQ(p.blocks[2].lines, (std::vector<std::string>{"```cpp", "```"}));
}

TEST(DocsParserTest, ReportsAFenceThatIsNeverClosed) {
  const Parsed p = parse_fences("text\n```cpp\nint x;\n");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NE(p.errors[0].find("2: the ```cpp block opened here is never closed"), std::string::npos)
      << p.errors[0];
}

TEST(DocsParserTest, FirstDifferenceNamesTheLineAndBothTexts) {
  EXPECT_FALSE(first_difference("a\nb\n", "a\nb\n"));
  const auto d = first_difference("a\nb\nc\n", "a\nB\nc\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->line, 2u);
  EXPECT_EQ(d->expected, "\"b\"");
  EXPECT_EQ(d->actual, "\"B\"");
  const auto longer = first_difference("a\n", "a\nextra\n");
  ASSERT_TRUE(longer);
  EXPECT_EQ(longer->expected, "the end of the text");
  EXPECT_EQ(longer->actual, "\"extra\"");
  const auto no_newline = first_difference("a\n", "a");
  ASSERT_TRUE(no_newline);
  EXPECT_EQ(no_newline->actual, "the end of the text (no newline at the end)");
}

// A scratch repository (a source dir and a bin dir) for the checks below.
class DocsCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(TAPEGRAD_DOCS_TEST_TMP_DIR) / fmt::format("{}-{}", info->name(), getpid());
    fs::remove_all(root_);
    fs::create_directories(root_ / "src" / "examples");
    fs::create_directories(root_ / "bin");
    dirs_ = {root_ / "src", root_ / "bin"};
    write(dirs_.source / "examples" / "hello.cpp",
          "// file: examples/hello.cpp\nint main() { return 0; }\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  // A stand-in for a built example: a shell script in the bin dir.
  void add_program(const std::string& name, const std::string& script) {
    const fs::path path = dirs_.bin / name;
    write(path, "#!/bin/sh\n" + script);
    fs::permissions(path, fs::perms::owner_all);
  }
  static std::string all(const Report& r) {
    std::string s;
    for (const auto& f : r.failures) s += f + "\n";
    return s;
  }

  fs::path root_;
  Dirs dirs_;
};

TEST_F(DocsCheckTest, AcceptsASnippetEqualToItsFile) {
  const std::string md =
      "Intro\n```cpp\n// file: examples/hello.cpp\nint main() { return 0; }\n```\n";
  const Report r = check_markdown(md, "lesson.md", dirs_);
  EXPECT_TRUE(r.failures.empty()) << all(r);
  EXPECT_EQ(r.files_checked, 1);
}

TEST_F(DocsCheckTest, ReportsASnippetThatDiffersFromItsFile) {
  const std::string md =
      "Intro\n"
      "\n"
      "```cpp\n"                       // line 3
      "// file: examples/hello.cpp\n"  // line 4
      "int main() { return 1; }\n"     // line 5: deliberately wrong
      "```\n";
  const Report r = check_markdown(md, "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  const std::string& f = r.failures[0];
  EXPECT_NE(f.find("lesson.md:3:"), std::string::npos) << f;
  EXPECT_NE(f.find("examples/hello.cpp at line 2 of the file (line 5 of lesson.md)"),
            std::string::npos)
      << f;
  EXPECT_NE(f.find("the block has \"int main() { return 1; }\""), std::string::npos) << f;
  EXPECT_NE(f.find("the file has \"int main() { return 0; }\""), std::string::npos) << f;
}

TEST_F(DocsCheckTest, ReportsASnippetShorterThanItsFile) {
  const Report r = check_markdown("```c++\n// file: examples/hello.cpp\n```\n", "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("the block has the end of the text, the file has \"int main()"),
            std::string::npos)
      << r.failures[0];
}

TEST_F(DocsCheckTest, RejectsACppBlockWithoutAFileLine) {
  const Report r = check_markdown("a\n```cpp\nint x = 1;\n```\n", "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("lesson.md:2: a ```cpp block must start with a line"),
            std::string::npos)
      << r.failures[0];
  EXPECT_NE(r.failures[0].find("\"int x = 1;\""), std::string::npos) << r.failures[0];
}

TEST_F(DocsCheckTest, RejectsASnippetOfAMissingFile) {
  const Report r =
      check_markdown("```cpp\n// file: examples/gone.cpp\nint x;\n```\n", "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("lesson.md:1: the block shows examples/gone.cpp, which does not "
                               "exist"),
            std::string::npos)
      << r.failures[0];
}

TEST_F(DocsCheckTest, RejectsAFileLineThatLeavesTheRepository) {
  const Report r =
      check_markdown("```cpp\n// file: ../src/examples/hello.cpp\n```\n", "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("relative to the repository root"), std::string::npos);
}

TEST_F(DocsCheckTest, AcceptsTheOutputAProgramPrints) {
  add_program("greet", "printf 'hello\\n\\nworld\\n'\n");
  const Report r =
      check_markdown("```text\n$ build/bin/greet\nhello\n\nworld\n```\n", "lesson.md", dirs_);
  EXPECT_TRUE(r.failures.empty()) << all(r);
  EXPECT_EQ(r.outputs_checked, 1);
}

TEST_F(DocsCheckTest, RunsTheProgramFromTheRepositoryRoot) {
  add_program("where", "ls examples\n");
  const Report r =
      check_markdown("```text\n$ build/bin/where\nhello.cpp\n```\n", "lesson.md", dirs_);
  EXPECT_TRUE(r.failures.empty()) << all(r);
}

TEST_F(DocsCheckTest, ReportsOutputThatDiffersFromTheProgram) {
  add_program("greet", "printf 'hello\\nworld\\n'\n");
  const std::string md =
      "Run it:\n"
      "```text\n"            // line 2
      "$ build/bin/greet\n"  // line 3
      "hello\n"              // line 4
      "wrold\n"              // line 5: deliberately wrong
      "```\n";
  const Report r = check_markdown(md, "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  const std::string& f = r.failures[0];
  EXPECT_NE(f.find("lesson.md:2: the output of build/bin/greet differs from the block at output "
                   "line 2 (line 5 of lesson.md)"),
            std::string::npos)
      << f;
  EXPECT_NE(f.find("the block has \"wrold\", the program printed \"world\""), std::string::npos)
      << f;
}

TEST_F(DocsCheckTest, ReportsAMissingNewlineAtTheEndOfTheOutput) {
  add_program("greet", "printf 'hello'\n");
  const Report r = check_markdown("```text\n$ build/bin/greet\nhello\n```\n", "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("the program printed the end of the text (no newline at the end)"),
            std::string::npos)
      << r.failures[0];
}

TEST_F(DocsCheckTest, FailsWhenTheProgramIsNotBuilt) {
  const Report r = check_markdown("```text\n$ build/bin/absent\nhi\n```\n", "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("lesson.md:1: build/bin/absent is not built"), std::string::npos)
      << r.failures[0];
  EXPECT_EQ(r.outputs_checked, 0);
}

TEST_F(DocsCheckTest, FailsWhenTheProgramExitsWithAnError) {
  add_program("crash", "echo partial; exit 3\n");
  const Report r = check_markdown("```text\n$ build/bin/crash\npartial\n```\n", "lesson.md", dirs_);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("build/bin/crash failed (exit status 3)"), std::string::npos)
      << r.failures[0];
}

TEST_F(DocsCheckTest, RejectsArgumentsAndPaths) {
  add_program("greet", "echo hi\n");
  for (const char* line : {"$ build/bin/greet --fast", "$ build/bin/../greet", "$ build/bin/"}) {
    const Report r =
        check_markdown(fmt::format("```text\n{}\nhi\n```\n", line), "lesson.md", dirs_);
    ASSERT_EQ(r.failures.size(), 1u) << line;
    EXPECT_NE(r.failures[0].find("no arguments"), std::string::npos) << r.failures[0];
  }
}

TEST_F(DocsCheckTest, IgnoresBlocksThatShowNeitherCodeNorOutput) {
  const std::string md =
      "# README without snippets\n"
      "```text\nsome diagram\n```\n"
      "```sh\n$ build/bin/absent --help\n```\n"
      "```cmake\nadd_subdirectory(x)\n```\n"
      "```\nplain\n```\n";
  const Report r = check_markdown(md, "README.md", dirs_);
  EXPECT_TRUE(r.failures.empty()) << all(r);
  EXPECT_EQ(r.files_checked + r.outputs_checked, 0);
}

}  // namespace
