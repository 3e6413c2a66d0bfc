// file: examples/course/tokenizer_bpe.cpp
// Chapter 24: byte-pair encoding. The worked example of nn/bpe.h, "春风 春雨 春风", merge by
// merge, with the pair counts that chose each merge; encoding new text with the merges; and
// what five short poems teach BPE: the first merges, and the tokens per character left at each
// vocabulary size. Ids below 256 are bytes, printed in hex (e6); ids from 256 in decimal.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"

namespace {

namespace nn = tg::nn;

using Pair = std::pair<int32_t, int32_t>;

std::string id_text(int64_t id) {
  return id < 256 ? fmt::format("{:02x}", id) : fmt::format("{}", id);
}

template <typename Ids>
std::string ids_text(const Ids& ids) {
  std::string out;
  for (const auto id : ids) out += (out.empty() ? "" : " ") + id_text(id);
  return out;
}

/// A token's bytes: whole UTF-8 characters as themselves, any other byte as <hex>, so the
/// first byte of 风 alone is "<e9>" and 春 with it is "春<e9>".
std::string piece(const std::string& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    const size_t len = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    bool whole = len > 0 && i + len <= bytes.size();
    for (size_t k = 1; whole && k < len; ++k) {
      whole = (static_cast<unsigned char>(bytes[i + k]) & 0xC0) == 0x80;
    }
    if (whole && lead != '\n') {
      out += bytes.substr(i, len);
      i += len;
    } else {
      out += lead == '\n' ? std::string("\\n") : fmt::format("<{:02x}>", lead);
      i += 1;
    }
  }
  return out;
}

/// The words of a text as training sees them: each distinct chunk of pretokenize(), as bytes,
/// with how often it occurs.
std::vector<std::pair<std::vector<int32_t>, int64_t>> words_of(std::string_view text) {
  std::map<std::string_view, int64_t> seen;
  for (const std::string_view chunk : nn::pretokenize(text)) ++seen[chunk];
  std::vector<std::pair<std::vector<int32_t>, int64_t>> words;
  for (const auto& [chunk, n] : seen) {
    std::vector<int32_t> bytes;
    for (const char c : chunk) bytes.push_back(static_cast<unsigned char>(c));
    words.emplace_back(bytes, n);
  }
  return words;
}

/// Every pair of neighbouring ids, counted once per occurrence of its word, most frequent
/// first and, among equals, the smallest pair first: the order training picks them in.
std::vector<std::pair<Pair, int64_t>> ranked_pairs(
    const std::vector<std::pair<std::vector<int32_t>, int64_t>>& words) {
  std::map<Pair, int64_t> count;
  for (const auto& [w, n] : words) {
    for (size_t i = 0; i + 1 < w.size(); ++i) count[{w[i], w[i + 1]}] += n;
  }
  std::vector<std::pair<Pair, int64_t>> ranked(count.begin(), count.end());
  std::ranges::stable_sort(ranked,
                           [](const auto& a, const auto& b) { return a.second > b.second; });
  return ranked;
}

// Five quatrains of five-character lines, one couplet a line, a blank line between poems:
// 孟浩然《春晓》, 李白《静夜思》, 王之涣《登鹳雀楼》, 王维《相思》, 柳宗元《江雪》.
constexpr std::string_view kPoems =
    "春眠不觉晓，处处闻啼鸟。\n夜来风雨声，花落知多少。\n\n"
    "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n\n"
    "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n\n"
    "红豆生南国，春来发几枝。\n愿君多采撷，此物最相思。\n\n"
    "千山鸟飞绝，万径人踪灭。\n孤舟蓑笠翁，独钓寒江雪。\n";

}  // namespace

int main() {
  // 1. The worked example, one merge at a time.
  const std::string_view text = "春风 春雨 春风";
  auto words = words_of(text);
  fmt::print("text \"{}\": {} bytes, {} distinct chunks\n", text, text.size(), words.size());
  for (const auto& [w, n] : words) {
    fmt::print("  \"{}\" x{}: {}\n", piece(std::string(w.begin(), w.end())), n, ids_text(w));
  }
  const nn::BpeTokenizer four = nn::BpeTokenizer::train(text, {.vocab_size = 260, .special = {}});
  for (size_t m = 0; m < four.merges().size(); ++m) {
    std::string counts;
    for (const auto& [pair, n] : ranked_pairs(words)) {
      counts += fmt::format(" ({},{}) {}", id_text(pair.first), id_text(pair.second), n);
    }
    const nn::BpeMerge merge = four.merges()[m];
    const auto id = static_cast<int32_t>(256 + m);
    fmt::print("pairs:{}\n", counts);
    fmt::print("merge {}: ({}, {}) -> {} = \"{}\"\n", m + 1, id_text(merge.left),
               id_text(merge.right), id, piece(four.token_bytes(id)));
    for (auto& [w, n] : words) nn::bpe::merge_pair(w, merge.left, merge.right, id);
  }
  fmt::print("the chunks after {} merges:", four.merges().size());
  for (const auto& [w, n] : words) fmt::print(" [{}]", ids_text(w));
  fmt::print("\n");

  // 2. Encoding with those merges: new text too, any bytes at all.
  for (const std::string_view s : {"春风", " 春雨", "风春", "秋风", "spring!"}) {
    const std::vector<int64_t> ids = four.encode(s);
    std::string pieces;
    for (const int64_t id : ids)
      pieces += (pieces.empty() ? "" : "|") + piece(four.token_bytes(id));
    fmt::print("encode(\"{}\") = [{}]  {}  round trip: {}\n", s, ids_text(ids), pieces,
               four.decode(ids) == s);
  }
  // Merges apply in the order they were learned, not left to right: with (b, c) learned
  // first and (a, b) second, "abc" is a|bc, as training would have cut it.
  const nn::BpeTokenizer ordered({{'b', 'c'}, {'a', 'b'}}, {});
  fmt::print("merges (b, c) -> 256, (a, b) -> 257: encode(\"abc\") = [{}]\n",
             ids_text(ordered.encode("abc")));

  // 3. Five poems: the first merges, and tokens per character as the vocabulary grows.
  const auto chars = static_cast<double>(nn::utf8::count_chars(kPoems));
  fmt::print("five poems: {} characters, {} bytes, {} chunks\n", nn::utf8::count_chars(kPoems),
             kPoems.size(), nn::pretokenize(kPoems).size());
  const nn::BpeTokenizer all =
      nn::BpeTokenizer::train(kPoems, {.vocab_size = 100000, .special = {}});
  for (int32_t from = 256; from < 256 + 24; from += 12) {
    std::string pieces;
    for (int32_t id = from; id < from + 12; ++id) pieces += " " + piece(all.token_bytes(id));
    fmt::print("merges {:>2} to {}:{}\n", from - 255, from - 244, pieces);
  }
  fmt::print("{:>6} {:>7} {:>7} {:>15}\n", "ids", "merges", "tokens", "tokens / char");
  for (const int64_t vocab : {256, 266, 300, 350, 400, 100000}) {
    const nn::BpeTokenizer t =
        nn::BpeTokenizer::train(kPoems, {.vocab_size = vocab, .special = {}});
    const std::vector<int64_t> ids = t.encode(kPoems);
    fmt::print("{:>6} {:>7} {:>7} {:>15.3f}\n", t.vocab_size(), t.merges().size(), ids.size(),
               static_cast<double>(ids.size()) / chars);
  }
  std::string longest;
  for (int64_t id = 256; id < all.vocab_size(); ++id) {
    if (all.token_bytes(id).size() > longest.size()) longest = all.token_bytes(id);
  }
  fmt::print("with every merge the text allows, the longest token: {}\n", piece(longest));
}
