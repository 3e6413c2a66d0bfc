// nn/corpus.h — real text from Debian packages: the fortune files of fortunes-zh (the 300
// Tang poems, the Song ci), cleaned for a language model, and a measure of verse form.
//
// A fortune file (the strfile format of the `fortune` program) is a list of entries, each
// ended by a line that holds only "%". fortunes-zh colours each poem's title and author
// with ANSI escape codes (ESC [ 32 m ... ESC [ m):
//
//   \e[32m《春晓》\e[m              <- title (green)
//   \e[33m作者：孟浩然\e[m          <- author (yellow)
//   春眠不觉晓，处处闻啼鸟。        <- the verses, plain
//   夜来风雨声，花落知多少。
//   %
//
// parse_fortunes() removes every escape sequence, and by default drops the lines that had one
// (the title and author), leaving the verses; keep_titles keeps them as plain text.
//
// verse_stats() measures what a model of Tang poetry should learn: the share of lines made
// of clauses of 5 characters each, or 7 each, every clause ended by Chinese punctuation
// (，。？！；). 94% of the lines of the 300 Tang poems are; a string of characters drawn
// one by one from their frequencies (a unigram sample) almost never is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tg::nn {

/// Where Debian's fortunes-zh puts the 300 Tang poems.
inline constexpr const char* kTangPoemsPath = "/usr/share/games/fortunes/tang300";

/// Settings of parse_fortunes.
struct FortuneOptions {
  /// Keep the lines that carried escape codes (a poem's title and author), as plain text.
  bool keep_titles = false;
};

/// The entries of a fortune-format text, cleaned as above: no escape sequence left, each
/// entry's lines ending in "\n", blank lines at its start and end removed, empty entries
/// dropped. Text after the last "%" line counts as an entry too.
std::vector<std::string> parse_fortunes(std::string_view text, const FortuneOptions& options = {});

/// parse_fortunes() of the file at `path`. ValueError if it cannot be read, saying which
/// Debian package has it for a path under /usr/share/games/fortunes/.
std::vector<std::string> read_fortunes(const std::string& path, const FortuneOptions& options = {});

/// The bytes of the file at `path`. ValueError naming `who`, the path, the system's reason
/// and `expected` (what the file should have been) if it cannot be read; for a path under
/// /usr/share/dict/ or /usr/share/games/fortunes/ it names the Debian package that has it.
std::string read_text_file(const std::string& path, std::string_view who,
                           std::string_view expected);

/// How many non-blank lines a text has, and how many of them are regular verse.
struct VerseStats {
  int64_t lines = 0;
  int64_t regular = 0;  // clauses of 5 characters each, or of 7 each, each ended by ，。？！；
  double share() const {
    return lines > 0 ? static_cast<double>(regular) / static_cast<double>(lines) : 0.0;
  }
};

/// The verse statistics of a UTF-8 text (invalid bytes count as characters).
VerseStats verse_stats(std::string_view text);

}  // namespace tg::nn
