// nn/corpus.cpp — cleaning fortune files, and counting regular verse lines.
#include "nn/corpus.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/core.h"
#include "nn/tokenizer.h"

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
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line == "%") {
      finish();
      continue;
    }
    bool had_escape = false;
    std::string clean = strip_escapes(line, had_escape);
    if (!had_escape || options.keep_titles) lines.push_back(std::move(clean));
  }
  finish();
  return entries;
}

std::vector<std::string> read_fortunes(const std::string& path, const FortuneOptions& options) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  const std::string hint = path.starts_with("/usr/share/games/fortunes/")
                               ? "; Debian's Chinese fortune files (the Tang poems, the Song ci) "
                                 "come with `apt-get install fortunes-zh`"
                               : "";
  TG_CHECK(in.good(), ValueError, "read_fortunes: cannot open '{}' ({}){}", path,
           errno != 0 ? std::strerror(errno) : "unknown error", hint);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  TG_CHECK(!in.bad(), ValueError, "read_fortunes: reading '{}' failed", path);
  return parse_fortunes(buffer.str(), options);
}

VerseStats verse_stats(std::string_view text) {
  // Chinese clause ends: ， 。 ？ ！ ；  (U+FF0C U+3002 U+FF1F U+FF01 U+FF1B)
  static const std::string_view kEnds[] = {"\xef\xbc\x8c", "\xe3\x80\x82", "\xef\xbc\x9f",
                                           "\xef\xbc\x81", "\xef\xbc\x9b"};
  VerseStats stats;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (blank(line)) {
      if (end == text.size()) break;
      continue;
    }
    ++stats.lines;
    // Walk the clauses: characters up to an end mark; all the same length, 5 or 7.
    int64_t length = -1;  // of the first clause
    int64_t chars = 0;
    bool regular = true;
    size_t i = 0;
    while (i < line.size() && regular) {
      bool ended = false;
      for (const std::string_view mark : kEnds) {
        if (line.substr(i, mark.size()) == mark) {
          ended = true;
          regular = (chars == 5 || chars == 7) && (length < 0 || chars == length);
          length = chars;
          chars = 0;
          i += mark.size();
          break;
        }
      }
      if (ended) continue;
      const auto c = static_cast<unsigned char>(line[i]);
      regular = c >= 0x80 || c == 0;  // an ASCII letter, space or digit is no verse
      ++chars;
      ++i;
      while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) ++i;
    }
    stats.regular += regular && chars == 0 && length > 0;
    if (end == text.size()) break;
  }
  return stats;
}

}  // namespace tg::nn
