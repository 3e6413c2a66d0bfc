// nn/corpus.cpp — cleaning fortune files, and counting regular verse lines.
#include "nn/corpus.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/core.h"

namespace tg::nn {
namespace {

/// `line` without its ANSI escape sequences: ESC '[', parameter bytes (digits, ';', ...),
/// one final byte from '@' to '~'. Sets `had_escape` when there was one.
std::string strip_escapes(std::string_view line, bool& had_escape) {
  std::string out;
  had_escape = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      out += line[i];
      continue;
    }
    had_escape = true;
    if (i + 1 < line.size() && line[i + 1] == '[') {
      size_t j = i + 2;
      while (j < line.size() && (line[j] < '@' || line[j] > '~')) ++j;
      i = j;  // the final byte (or the end of the line)
    }
  }
  return out;
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

/// Calls f(line) for each line of `text`, without its '\n'; a last line without one counts.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    f(text.substr(start, end - start));
    start = end + 1;
  }
}

/// Whether `line` is clauses of 5 characters each, or of 7 each, every one ended by a
/// Chinese clause mark: ， 。 ？ ！ ；  (U+FF0C U+3002 U+FF1F U+FF01 U+FF1B).
bool regular_verse(std::string_view line) {
  static const std::string_view kEnds[] = {"\xef\xbc\x8c", "\xe3\x80\x82", "\xef\xbc\x9f",
                                           "\xef\xbc\x81", "\xef\xbc\x9b"};
  int64_t length = -1;  // of the first clause
  int64_t chars = 0;    // in the clause being read
  for (size_t i = 0; i < line.size();) {
    const auto mark = std::ranges::find_if(
        kEnds, [&](std::string_view m) { return line.substr(i, m.size()) == m; });
    if (mark != std::end(kEnds)) {
      if ((chars != 5 && chars != 7) || (length >= 0 && chars != length)) return false;
      length = chars;
      chars = 0;
      i += mark->size();
      continue;
    }
    const auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x80 && c != 0) return false;  // an ASCII letter, space or digit is no verse
    ++chars;
    ++i;
    while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) ++i;
  }
  return chars == 0 && length > 0;  // ended by a mark, after at least one clause
}

}  // namespace

std::vector<std::string> parse_fortunes(std::string_view text, const FortuneOptions& options) {
  std::vector<std::string> entries;
  std::vector<std::string> lines;  // of the entry being read
  auto finish = [&] {
    while (!lines.empty() && blank(lines.back())) lines.pop_back();
    size_t first = 0;
    while (first < lines.size() && blank(lines[first])) ++first;
    std::string entry;
    for (size_t i = first; i < lines.size(); ++i) entry += lines[i] + "\n";
    if (!entry.empty()) entries.push_back(std::move(entry));
    lines.clear();
  };
  for_each_line(text, [&](std::string_view line) {
    if (line == "%") {
      finish();
      return;
    }
    bool had_escape = false;
    std::string clean = strip_escapes(line, had_escape);
    if (!had_escape || options.keep_titles) lines.push_back(std::move(clean));
  });
  finish();
  return entries;
}

std::string read_text_file(const std::string& path, std::string_view who,
                           std::string_view expected) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  const std::string hint =
      path.starts_with("/usr/share/dict/")
          ? "; Debian's word lists come with `apt-get install wamerican`"
      : path.starts_with("/usr/share/games/fortunes/")
          ? "; Debian's Chinese fortune files (the Tang poems, the Song ci) come with "
            "`apt-get install fortunes-zh`"
          : "";
  TG_CHECK(in.good(), ValueError, "{}: cannot open '{}' ({}); expected {}{}", who, path,
           errno != 0 ? std::strerror(errno) : "unknown error", expected, hint);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  TG_CHECK(!in.bad(), ValueError, "{}: reading '{}' failed", who, path);
  return buffer.str();
}

std::vector<std::string> read_fortunes(const std::string& path, const FortuneOptions& options) {
  return parse_fortunes(read_text_file(path, "read_fortunes", "a fortune file"), options);
}

VerseStats verse_stats(std::string_view text) {
  VerseStats stats;
  for_each_line(text, [&](std::string_view line) {
    if (blank(line)) return;
    ++stats.lines;
    stats.regular += regular_verse(line);
  });
  return stats;
}

}  // namespace tg::nn
