// nn/bpe.cpp — byte-level BPE: the chunks, training (exact, with incremental pair counts),
// encoding by merge rank, and the saved formats.
#include "nn/bpe.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>
#include <unordered_set>

namespace tg::nn {
namespace {

constexpr int32_t kBytes = 256;

// ---- pretokenize: what a character is, roughly as Unicode's categories say

enum class Kind { kSpace, kLetter, kDigit, kOther };

/// What next_char returns for a byte that does not start a valid UTF-8 character.
constexpr char32_t kInvalid = 0x110000;

/// The code point at text[i] and its length in bytes; a byte that does not start a valid
/// UTF-8 character is returned alone, as the invalid code point kInvalid (a symbol).
std::pair<char32_t, size_t> next_char(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return {lead, 1};
  size_t len = (lead & 0xE0) == 0xC0   ? 2
               : (lead & 0xF0) == 0xE0 ? 3
               : (lead & 0xF8) == 0xF0 ? 4
                                       : 0;
  if (len == 0 || i + len > text.size()) return {kInvalid, 1};
  char32_t cp = lead & (0x7Fu >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return {kInvalid, 1};
    cp = (cp << 6) | (next & 0x3Fu);
  }
  const char32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {kInvalid, 1};
  return {cp, len};
}

/// The punctuation and symbol blocks among the code points from U+0080 on: Latin-1's signs,
/// general punctuation to the misc. symbols, CJK punctuation (、。「」), the vertical and
/// small forms, and the fullwidth punctuation (，！？：；（）). Everything else from U+0080
/// on counts as a letter: Han characters, kana, Hangul, accented Latin, Cyrillic, ...
bool is_symbol_above_ascii(char32_t cp) {
  return (cp >= 0x80 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x2BFF) ||
         (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFE10 && cp <= 0xFE1F) ||
         (cp >= 0xFE30 && cp <= 0xFE6F) || (cp >= 0xFF00 && cp <= 0xFF0F) ||
         (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) ||
         (cp >= 0xFF5B && cp <= 0xFF65) || cp >= 0xFFF0;
}

Kind kind_of(char32_t cp) {
  if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\v' || cp == '\f') {
    return Kind::kSpace;
  }
  if (cp < 0x80) {
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return Kind::kLetter;
    return cp >= '0' && cp <= '9' ? Kind::kDigit : Kind::kOther;
  }
  return is_symbol_above_ascii(cp) ? Kind::kOther : Kind::kLetter;
}

Kind kind_at(std::string_view text, size_t i) { return kind_of(next_char(text, i).first); }

// ---- the saved formats

/// `s` with every byte that is not part of a valid UTF-8 character written as \xNN, so that
/// an error message about it is text (the error log is JSON, which holds only UTF-8).
std::string escape_invalid_utf8(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const auto [cp, len] = next_char(s, i);
    if (cp == kInvalid) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
    else out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

void check_special(const std::vector<std::string>& special, std::string_view who) {
  for (size_t i = 0; i < special.size(); ++i) {
    // A special token is text: the JSON form of the tokenizer (to_json, checkpoints) can only
    // hold valid UTF-8, so a token with other bytes could be loaded but never saved.
    for (size_t b = 0; b < special[i].size();) {
      const auto [cp, len] = next_char(special[i], b);
      TG_CHECK(cp != kInvalid, ValueError,
               "{}: special token {} is not valid UTF-8 (byte {} is 0x{:02x}): \"{}\"", who, i, b,
               static_cast<unsigned char>(special[i][b]), escape_invalid_utf8(special[i]));
      b += len;
    }
    TG_CHECK(!special[i].empty() && special[i].find('\n') == std::string::npos, ValueError,
             "{}: special token {} must be non-empty and on one line, got \"{}\"", who, i,
             special[i]);
    for (size_t j = 0; j < i; ++j) {
      TG_CHECK(special[i] != special[j], ValueError, "{}: special token \"{}\" is given twice", who,
               special[i]);
    }
  }
}

}  // namespace

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> chunks;
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    // One space joins the run after it (" cat", " 春风"), as in GPT-2.
    if (text[i] == ' ' && i + 1 < text.size() && kind_at(text, i + 1) != Kind::kSpace) ++i;
    const Kind kind = kind_at(text, i);
    size_t end = i + next_char(text, i).second;
    while (end < text.size() && kind_at(text, end) == kind) end += next_char(text, end).second;
    // A run of whitespace before a word leaves its last space to that word: "a  b" is
    // "a", " ", " b" (GPT-2's \s+(?!\S)).
    if (kind == Kind::kSpace && end < text.size() && end - start > 1 && text[end - 1] == ' ') {
      --end;
    }
    chunks.push_back(text.substr(start, end - start));
    i = end;
  }
  return chunks;
}

namespace bpe {

int64_t merge_pair(std::vector<int32_t>& word, int32_t left, int32_t right, int32_t merged) {
  // exercise bpe.merge: begin
  // One pass with a read index i and a write index out: where (left, right) starts at i,
  // write the merged id and skip both; otherwise copy word[i]. Left to right, so in
  // [2, 2, 2] the first two merge and the third is left alone, never merged twice.
  size_t out = 0;
  int64_t replaced = 0;
  for (size_t i = 0; i < word.size();) {
    if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
      word[out++] = merged;
      i += 2;
      ++replaced;
    } else {
      word[out++] = word[i++];
    }
  }
  word.resize(out);
  return replaced;
  // exercise bpe.merge: end
}

}  // namespace bpe

// ---- training

BpeTokenizer BpeTokenizer::train(std::string_view text, const BpeTrainOptions& options) {
  check_special(options.special, "BpeTokenizer::train");
  const auto n_special = static_cast<int64_t>(options.special.size());
  TG_CHECK(options.vocab_size >= kBytes + n_special, ValueError,
           "BpeTokenizer::train: vocab_size {} is less than the 256 byte ids plus {} special "
           "token(s)",
           options.vocab_size, n_special);
  const int64_t n_merges = options.vocab_size - kBytes - n_special;

  // 1. The distinct chunks ("words") and how often each occurs: a pair is counted once per
  //    occurrence of its word, so the work is per distinct word, not per byte of the text.
  std::unordered_map<std::string_view, int64_t> seen;
  for (const std::string_view chunk : pretokenize(text)) ++seen[chunk];
  std::vector<std::string_view> chunks;
  chunks.reserve(seen.size());
  for (const auto& [chunk, count] : seen) chunks.push_back(chunk);
  std::ranges::sort(chunks);  // a fixed order, whatever the hash map's
  std::vector<std::vector<int32_t>> words(chunks.size());
  std::vector<int64_t> freq(chunks.size());
  for (size_t w = 0; w < chunks.size(); ++w) {
    for (const char c : chunks[w]) words[w].push_back(static_cast<unsigned char>(c));
    freq[w] = seen[chunks[w]];
  }

  // 2. The count of every neighbouring pair over the text, and the words each pair is in.
  std::unordered_map<uint64_t, int64_t> count;
  std::unordered_map<uint64_t, std::vector<int32_t>> where;
  std::vector<uint64_t> grown;  // pairs whose count went up since the last merge
  auto add_pairs = [&](int32_t w, int64_t sign, int32_t only_with) {
    const std::vector<int32_t>& word = words[static_cast<size_t>(w)];
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      const uint64_t key = bpe::pair_key(word[i], word[i + 1]);
      count[key] += sign * freq[static_cast<size_t>(w)];
      const bool is_new = only_with < 0 || word[i] == only_with || word[i + 1] == only_with;
      if (sign > 0 && is_new) {
        where[key].push_back(w);
        grown.push_back(key);
      }
    }
  };
  for (size_t w = 0; w < words.size(); ++w) add_pairs(static_cast<int32_t>(w), +1, -1);

  // 3. The most frequent pair, from a heap of (count, pair) entries. An entry goes in
  //    whenever a pair's count grows; when a count falls its old entry stays, too high, and
  //    is put right when it reaches the top. Ties go to the smallest pair of ids.
  using Entry = std::pair<int64_t, uint64_t>;
  auto lower = [](const Entry& a, const Entry& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(lower)> heap(lower);
  auto push_grown = [&] {
    std::ranges::sort(grown);
    const auto dup = std::ranges::unique(grown);
    for (auto it = grown.begin(); it != dup.begin(); ++it) heap.emplace(count[*it], *it);
    grown.clear();
  };
  push_grown();

  std::vector<BpeMerge> merges;
  std::vector<int32_t> stamp(words.size(), -1);  // the last merge that rewrote each word
  std::vector<int32_t> after;                    // a word with the merge applied (scratch)
  while (static_cast<int64_t>(merges.size()) < n_merges && !heap.empty()) {
    const auto [c, key] = heap.top();
    heap.pop();
    const int64_t now = count[key];
    if (now != c) {  // a stale entry: its count fell since it went in
      if (now > 0) heap.emplace(now, key);
      continue;
    }
    if (c <= 0) break;  // nothing left to merge
    const auto left = static_cast<int32_t>(key >> 32);
    const auto right = static_cast<int32_t>(key & 0xFFFFFFFFu);
    const auto merged = static_cast<int32_t>(kBytes + merges.size());
    merges.push_back({left, right});
    // 4. Rewrite every word with the pair: its old pairs leave the counts, its new ones
    //    come in. Only pairs next to a merge change, but the whole (short) word is redone.
    const std::vector<int32_t> list = std::move(where[key]);
    where.erase(key);
    for (const int32_t w : list) {
      auto& word = words[static_cast<size_t>(w)];
      if (stamp[static_cast<size_t>(w)] == merged) continue;  // listed twice
      stamp[static_cast<size_t>(w)] = merged;
      after.assign(word.begin(), word.end());
      if (bpe::merge_pair(after, left, right, merged) == 0) continue;  // merged away already
      add_pairs(w, -1, -1);
      word.swap(after);
      add_pairs(w, +1, merged);
    }
    push_grown();
  }
  return BpeTokenizer(std::move(merges), options.special);
}

// ---- the tokenizer

BpeTokenizer::BpeTokenizer(std::vector<BpeMerge> merges, std::vector<std::string> special)
    : merges_(std::move(merges)), special_(std::move(special)) {
  check_special(special_, "BpeTokenizer");
  for (int32_t b = 0; b < kBytes; ++b) bytes_.emplace_back(1, static_cast<char>(b));
  for (size_t i = 0; i < merges_.size(); ++i) {
    const BpeMerge m = merges_[i];
    const auto next = static_cast<int64_t>(kBytes + i);
    TG_CHECK(m.left >= 0 && m.right >= 0 && m.left < next && m.right < next, ValueError,
             "BpeTokenizer: merge {} ({}, {}) uses an id that does not exist yet: it makes id "
             "{}, from ids below that",
             i, m.left, m.right, next);
    const auto [it, fresh] = rank_.emplace(bpe::pair_key(m.left, m.right), static_cast<int32_t>(i));
    TG_CHECK(fresh, ValueError, "BpeTokenizer: merge {} ({}, {}) repeats merge {}", i, m.left,
             m.right, it->second);
    bytes_.push_back(bytes_[static_cast<size_t>(m.left)] + bytes_[static_cast<size_t>(m.right)]);
  }
  for (const std::string& s : special_) bytes_.push_back(s);
}

int64_t BpeTokenizer::vocab_size() const { return static_cast<int64_t>(bytes_.size()); }

void BpeTokenizer::encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const {
  // exercise bpe.encode: begin
  // Apply the merges in the order they were learned: of all neighbouring pairs that are a
  // merge, the one learned first (lowest rank) goes first, the leftmost if it occurs twice.
  // rank[i] is the rank of the pair (ids[i], ids[i + 1]), or kNone. A merge at i changes
  // only the pairs that start at i - 1 and i, so only those two are looked up again.
  constexpr int32_t kNone = INT32_MAX;
  std::vector<int32_t> ids(chunk.size());
  for (size_t i = 0; i < chunk.size(); ++i) ids[i] = static_cast<unsigned char>(chunk[i]);
  auto rank_of = [&](size_t i) {
    const auto it = rank_.find(bpe::pair_key(ids[i], ids[i + 1]));
    return it == rank_.end() ? kNone : it->second;
  };
  std::vector<int32_t> rank(ids.size() > 0 ? ids.size() - 1 : 0);
  for (size_t i = 0; i < rank.size(); ++i) rank[i] = rank_of(i);
  while (!rank.empty()) {
    const auto best = std::ranges::min_element(rank);  // the leftmost of equal ranks
    if (*best == kNone) break;
    const auto i = static_cast<size_t>(best - rank.begin());
    ids[i] = kBytes + *best;
    ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    rank.erase(rank.begin() + static_cast<std::ptrdiff_t>(i));
    if (i > 0) rank[i - 1] = rank_of(i - 1);
    if (i < rank.size()) rank[i] = rank_of(i);
  }
  out.insert(out.end(), ids.begin(), ids.end());
  // exercise bpe.encode: end
}

std::vector<int64_t> BpeTokenizer::encode(std::string_view text) const {
  // A text repeats its chunks ("the", "，", "\n"): each distinct one is encoded once.
  std::unordered_map<std::string_view, std::vector<int32_t>> done;
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 2);
  for (const std::string_view chunk : pretokenize(text)) {
    auto [it, fresh] = done.try_emplace(chunk);
    if (fresh) encode_chunk(chunk, it->second);
    ids.insert(ids.end(), it->second.begin(), it->second.end());
  }
  return ids;
}

std::vector<int64_t> BpeTokenizer::encode_with_special(std::string_view text) const {
  std::vector<int64_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    // The earliest special token from `start` (the longest, if two start there).
    size_t at = std::string_view::npos;
    size_t which = 0;
    for (size_t s = 0; s < special_.size(); ++s) {
      const size_t pos = text.find(special_[s], start);
      if (pos < at || (pos == at && pos != std::string_view::npos &&
                       special_[s].size() > special_[which].size())) {
        at = pos;
        which = s;
      }
    }
    const std::vector<int64_t> part = encode(
        text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    ids.insert(ids.end(), part.begin(), part.end());
    if (at == std::string_view::npos) break;
    ids.push_back(kBytes + static_cast<int64_t>(merges_.size() + which));
    start = at + special_[which].size();
  }
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += token_bytes(ids[i]);
  return out;
}

const std::string& BpeTokenizer::token_bytes(int64_t id) const {
  TG_CHECK(id >= 0 && id < vocab_size(), IndexError,
           "BpeTokenizer: id {} is outside the vocabulary [0, {})", id, vocab_size());
  return bytes_[static_cast<size_t>(id)];
}

int64_t BpeTokenizer::special_id(std::string_view name) const {
  for (size_t s = 0; s < special_.size(); ++s) {
    if (special_[s] == name) return kBytes + static_cast<int64_t>(merges_.size() + s);
  }
  tg::detail::raise<ValueError>(
      "BpeTokenizer::special_id: \"{}\" is not a special token (they are: "
      "{})",
      name, fmt::join(special_, ", "));
}

// ---- saved formats

void BpeTokenizer::save(const std::string& path) const {
  std::string text = "tapegrad-bpe 1\npretokenizer words-v1\n";
  for (const std::string& s : special_) text += "special " + s + "\n";
  text += fmt::format("merges {}\n", merges_.size());
  for (const BpeMerge& m : merges_) text += fmt::format("{} {}\n", m.left, m.right);
  write_file_atomically(path, text, "BpeTokenizer::save");
}

BpeTokenizer BpeTokenizer::load(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  TG_CHECK(in.good(), ValueError, "BpeTokenizer::load: cannot open '{}' ({})", path,
           errno != 0 ? std::strerror(errno) : "unknown error");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  TG_CHECK(!in.bad(), ValueError, "BpeTokenizer::load: reading '{}' failed", path);
  auto fail = [&](size_t line, std::string_view what) {
    tg::detail::raise<ValueError>("BpeTokenizer::load: '{}' line {}: {}", path, line + 1, what);
  };
  if (lines.size() < 3 || lines[0] != "tapegrad-bpe 1") {
    fail(0, "expected the header \"tapegrad-bpe 1\" (a file written by BpeTokenizer::save)");
  }
  if (lines[1] != "pretokenizer words-v1") {
    fail(1, fmt::format("expected \"pretokenizer words-v1\", got \"{}\"", lines[1].substr(0, 80)));
  }
  size_t i = 2;
  std::vector<std::string> special;
  for (; i < lines.size() && lines[i].starts_with("special "); ++i)
    special.push_back(lines[i].substr(8));
  long long n = -1;
  char extra = 0;
  if (i >= lines.size() || std::sscanf(lines[i].c_str(), "merges %lld%c", &n, &extra) != 1 ||
      n < 0 || static_cast<size_t>(n) != lines.size() - i - 1) {
    fail(i, fmt::format("expected \"merges N\" followed by exactly N lines (the file has {} "
                        "more)",
                        lines.size() > i ? lines.size() - i - 1 : 0));
  }
  std::vector<BpeMerge> merges;
  for (size_t k = i + 1; k < lines.size(); ++k) {
    long long a = -1, b = -1;
    if (std::sscanf(lines[k].c_str(), "%lld %lld%c", &a, &b, &extra) != 2 || a < 0 || b < 0 ||
        a > INT32_MAX || b > INT32_MAX) {
      fail(k, fmt::format("expected two ids \"a b\", got \"{}\"", lines[k].substr(0, 80)));
    }
    merges.push_back({static_cast<int32_t>(a), static_cast<int32_t>(b)});
  }
  return BpeTokenizer(std::move(merges), std::move(special));
}

std::string BpeTokenizer::to_json() const {
  nlohmann::json pairs = nlohmann::json::array();
  for (const BpeMerge& m : merges_) pairs.push_back({m.left, m.right});
  return nlohmann::json{{"type", "bpe"}, {"merges", pairs}, {"special", special_}}.dump();
}

BpeTokenizer BpeTokenizer::from_json(std::string_view json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    tg::detail::raise<ValueError>("BpeTokenizer::from_json: not valid JSON ({})", e.what());
  }
  const auto ok_pair = [](const nlohmann::json& p) {
    return p.is_array() && p.size() == 2 && p[0].is_number_integer() && p[1].is_number_integer() &&
           p[0].get<int64_t>() >= 0 && p[1].get<int64_t>() >= 0 &&
           p[0].get<int64_t>() <= INT32_MAX && p[1].get<int64_t>() <= INT32_MAX;
  };
  // j.value("type", "") would throw nlohmann's own type_error for a "type" that is not a
  // string (fuzz_bpe found it): compare the JSON values instead, which is false for those.
  bool ok = j.is_object() && j.contains("type") && j["type"] == "bpe" && j.contains("merges") &&
            j["merges"].is_array() && j.contains("special") && j["special"].is_array();
  if (ok) {
    for (const auto& p : j["merges"]) ok = ok && ok_pair(p);
    for (const auto& s : j["special"]) ok = ok && s.is_string();
  }
  TG_CHECK(ok, ValueError,
           "BpeTokenizer::from_json: expected {{\"type\": \"bpe\", \"merges\": [[a, b], ...], "
           "\"special\": [\"...\"]}} with ids from 0, got {}",
           j.dump().substr(0, 200));
  std::vector<BpeMerge> merges;
  for (const auto& p : j["merges"]) merges.push_back({p[0].get<int32_t>(), p[1].get<int32_t>()});
  return BpeTokenizer(std::move(merges), j["special"].get<std::vector<std::string>>());
}

}  // namespace tg::nn
