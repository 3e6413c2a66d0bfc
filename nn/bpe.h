// nn/bpe.h — a byte-level byte-pair-encoding tokenizer (GPT-2's kind), trained from a text.
//
// Start from bytes: ids 0..255 are the 256 byte values, so any text, any language, any
// broken UTF-8 even, can be encoded and nothing is ever unknown. Then learn merges: count
// every pair of neighbouring ids in the training text, give the most frequent pair a new id,
// replace it everywhere, and repeat until the vocabulary has the size asked for. Worked by
// hand on "春风 春雨 春风" (chapter 24 of the course; each Han character is 3 UTF-8 bytes,
// 春 = e6 98 a5, 风 = e9 a3 8e, 雨 = e9 9b a8):
//
//   merge 1: (98, a5) -> 256, seen 3 times (three pairs are seen 3 times: the smallest wins)
//   merge 2: (e6, 256) -> 257, the bytes of 春, 3 times
//   merge 3: (257, e9) -> 258, 春 and the first byte of 风 or 雨: bytes know no characters
//
// encode() applies the merges in the order they were learned; decode() glues the bytes of
// each id back together. Special tokens (<|endoftext|> by default) take the ids after the
// merges; only encode_with_special() turns their text into their ids.
//
// Pre-tokenisation: merges never cross the boundary of a chunk, and chunks are cut as
// GPT-2 cuts them (without its English contractions): a run of letters, a run of digits,
// or a run of other symbols, each with at most one space in front, or a run of whitespace.
// A letter is an ASCII letter or any character from U+0080 on that is not punctuation, so
// a line of Chinese verse, 兰叶春葳蕤，桂华秋皎洁。, is the chunks 兰叶春葳蕤 ， 桂华秋皎洁 。
// and merges can join characters into words but never a word to its comma. The exact rule
// is pretokenize() below ("words-v1" in the saved file).
//
// Saved (save/load) as plain text, one item per line:
//
//   tapegrad-bpe 1
//   pretokenizer words-v1
//   special <|endoftext|>          (one line per special token, in id order)
//   merges 744                     (then that many lines "a b": the pair merged into id 256 + i)
//   230 152
//   ...
//
// Equivalent: Hugging Face `tokenizers` (ByteLevel pre-tokenizer + BPE model + BpeTrainer),
// or tiktoken's encoders. Its training is exact rather than approximate: each merge is the
// most frequent pair of the text as it stands (ties: the smallest pair of ids).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nn/tokenizer.h"

namespace tg::nn {

/// One learned merge: the pair (left, right) of ids that becomes one new id.
struct BpeMerge {
  int32_t left;
  int32_t right;
  bool operator==(const BpeMerge&) const = default;
};

/// Settings of BpeTokenizer::train.
struct BpeTrainOptions {
  /// The vocabulary wanted: 256 bytes + merges + special tokens. At least 256 + the
  /// specials; training stops early if no pair is left to merge.
  int64_t vocab_size = 1000;
  /// Special tokens, given the last ids in this order. None may be empty or hold a newline.
  std::vector<std::string> special = {"<|endoftext|>"};
};

/// A byte-level BPE tokenizer: ids 0..255 are bytes, 256.. the merges, then the specials.
class BpeTokenizer : public Tokenizer {
 public:
  /// Learns merges from `text` until the vocabulary has options.vocab_size ids.
  static BpeTokenizer train(std::string_view text, const BpeTrainOptions& options = {});
  /// A tokenizer from its merges (merge i makes id 256 + i, from ids below that) and special
  /// tokens (each non-empty, on one line, valid UTF-8, given once: they are saved as JSON
  /// text). ValueError naming the first merge or special that breaks the rules.
  explicit BpeTokenizer(std::vector<BpeMerge> merges,
                        std::vector<std::string> special = {"<|endoftext|>"});

  int64_t vocab_size() const override;
  /// The ids of `text`, any bytes at all; special tokens' text is encoded as ordinary text.
  std::vector<int64_t> encode(std::string_view text) const override;
  /// As encode(), but every occurrence of a special token's text becomes its id.
  std::vector<int64_t> encode_with_special(std::string_view text) const;
  using Tokenizer::decode;
  /// The bytes of `ids`, concatenated (the text of a special id is its name). IndexError for
  /// an id outside [0, vocab_size()).
  std::string decode(const std::vector<int64_t>& ids) const override;

  const std::vector<BpeMerge>& merges() const { return merges_; }
  const std::vector<std::string>& special() const { return special_; }
  /// The id of special token `name`. ValueError listing the special tokens if none is.
  int64_t special_id(std::string_view name) const;
  /// The bytes that id stands for. IndexError outside [0, vocab_size()).
  const std::string& token_bytes(int64_t id) const;

  /// Writes the plain-text format above (atomically: a temporary file, then a rename).
  void save(const std::string& path) const;
  /// Reads what save() wrote. ValueError naming the file and line of anything else.
  static BpeTokenizer load(const std::string& path);
  /// {"type": "bpe", "merges": [[a, b], ...], "special": [...]}.
  std::string to_json() const override;
  /// The tokenizer that to_json() wrote. ValueError for anything else.
  static BpeTokenizer from_json(std::string_view json);
  std::unique_ptr<Tokenizer> clone() const override {
    return std::make_unique<BpeTokenizer>(*this);
  }

 private:
  /// The ids of one chunk of pretokenize(): its bytes, merged by rank.
  void encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const;

  std::vector<BpeMerge> merges_;
  std::vector<std::string> special_;
  std::vector<std::string> bytes_;              // of every id, specials included
  std::unordered_map<uint64_t, int32_t> rank_;  // pair key -> merge index
};

/// The chunks BPE merges within (the "words-v1" rule in the comment at the top): views into
/// `text`, which they cover exactly, in order. Any bytes are accepted; a byte that is not
/// valid UTF-8 counts as a symbol of its own.
std::vector<std::string_view> pretokenize(std::string_view text);

namespace bpe {

/// The pair (left, right) as one 64-bit key of a hash map.
inline uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

/// Replaces, left to right, every occurrence of the pair (left, right) in `word` by `merged`:
/// [1, 2, 2, 2, 3] with (2, 2) -> 9 gives [1, 9, 2, 3]. Returns how many it replaced.
int64_t merge_pair(std::vector<int32_t>& word, int32_t left, int32_t right, int32_t merged);

}  // namespace bpe
}  // namespace tg::nn
