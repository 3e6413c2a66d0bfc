// nn/text_data.h — a character tokenizer and a text data set of random training windows.
//
// CharTokenizer: the vocabulary is every distinct Unicode code point of a UTF-8 text,
// sorted by code point, and a character's id is its index there. For the text "hello":
//
//   vocab = ['e', 'h', 'l', 'o']      encode("hole") = [1, 3, 2, 0]      decode([2, 0]) = "le"
//
// The text is decoded as strict UTF-8 (no overlong forms, no surrogates, nothing above
// U+10FFFF); a bad byte is an error naming its offset. to_json() gives the vocabulary as a
// small JSON object, kept in a checkpoint's metadata so that sampling later uses the same
// ids: {"type": "char", "vocab": "\nabc..."} (the code points concatenated, in order).
//
// Rare characters, the documented rule. Chinese text has thousands of distinct characters
// and many appear once or twice (the 300 Tang poems: about 2,500 characters, a third of them
// seen once), each costing an embedding row and an output row that barely trains. With
// byte_fallback, ids 0..255 are the 256 byte values and the vocabulary (ids 256 on) keeps
// only the characters seen at least min_count times; any other character is encoded as its
// UTF-8 bytes, 1 to 4 ids, as SentencePiece's byte fallback does. Nothing is ever unknown,
// and decode(encode(text)) == text for every valid UTF-8 text. Without it (the default),
// every character of the text gets an id and encoding a character outside them is an error.
//
// TextDataset: tokenizes a whole text once and splits the ids into a training part (the
// first 1 - val_fraction) and a validation part (the rest), like nanoGPT's
// `data[:n]`, `data[n:]`. get_batch draws B random windows of T + 1 consecutive ids:
//
//   ids   ... 5 9 2 7 1 ...        x[b] = ids[i : i + T]
//             ^ i                  y[b] = ids[i + 1 : i + T + 1]   (the next id at each step)
//
// PyTorch has no built-in equivalent; this is the get_batch of Karpathy's nanoGPT with any
// tokenizer (nn/tokenizer.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/core.h"
#include "nn/tokenizer.h"
#include "ops/ops.h"

namespace tg::nn {

/// Settings of CharTokenizer.
struct CharTokenizerOptions {
  /// Ids 0..255 are the bytes, and a character outside the vocabulary is encoded as its
  /// UTF-8 bytes instead of being an error.
  bool byte_fallback = false;
  /// Only characters seen at least this often get an id of their own; needs byte_fallback
  /// when more than 1 (the others must go somewhere).
  int64_t min_count = 1;
};

/// A character-level tokenizer: one id per distinct Unicode code point of a text.
class CharTokenizer : public Tokenizer {
 public:
  /// The vocabulary of `text` (UTF-8): its distinct code points (seen at least
  /// options.min_count times), sorted. ValueError naming the byte offset if `text` is not
  /// valid UTF-8, or for min_count above 1 without byte_fallback.
  explicit CharTokenizer(std::string_view text, const CharTokenizerOptions& options = {});

  /// Number of ids: the characters, plus the 256 bytes with byte_fallback.
  int64_t vocab_size() const override;
  /// The code points that have ids of their own, in id order (from first_char_id()).
  const std::vector<char32_t>& vocab() const { return vocab_; }
  bool byte_fallback() const { return byte_fallback_; }
  /// The id of vocab()[0]: 256 with byte_fallback, 0 without.
  int64_t first_char_id() const { return byte_fallback_ ? 256 : 0; }

  /// The ids of every character of `text`. Without byte_fallback, ValueError naming a
  /// character and its position (in characters) that is not in the vocabulary.
  std::vector<int64_t> encode(std::string_view text) const override;
  using Tokenizer::decode;
  /// The UTF-8 text of `ids`. IndexError for an id outside [0, vocab_size()).
  std::string decode(const std::vector<int64_t>& ids) const override;

  /// {"type": "char", "vocab": "<the characters in id order>"}, with "byte_fallback": true
  /// when on.
  std::string to_json() const override;
  /// The tokenizer that to_json() wrote. ValueError for anything else.
  static CharTokenizer from_json(std::string_view json);
  std::unique_ptr<Tokenizer> clone() const override {
    return std::make_unique<CharTokenizer>(*this);
  }

 private:
  CharTokenizer() = default;
  std::vector<char32_t> vocab_;  // sorted, distinct
  bool byte_fallback_ = false;
};

/// Settings of TextDataset.
struct TextDatasetOptions {
  /// The last fraction of the ids that forms the validation split, in [0, 1).
  double val_fraction = 0.1;
};

/// A pair of input and target windows, both (B, T) int64; y is x shifted by one position.
struct Batch {
  Tensor x;
  Tensor y;
};

/// A tokenized text with a contiguous train/validation split.
class TextDataset {
 public:
  /// Tokenizes `text` with a vocabulary built from it.
  explicit TextDataset(std::string_view text, const TextDatasetOptions& options = {});
  /// Tokenizes `text` with a given tokenizer (e.g. the one stored in a checkpoint); the data
  /// set keeps a copy of it.
  TextDataset(std::string_view text, const Tokenizer& tokenizer,
              const TextDatasetOptions& options = {});
  /// The UTF-8 text file at `path` (e.g. /usr/share/dict/words, from Debian's `wamerican`).
  /// ValueError saying what was expected if it cannot be read.
  static TextDataset from_file(const std::string& path, const TextDatasetOptions& options = {});

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  /// The ids of "train" or "val" as a 1-D int64 tensor.
  const Tensor& split(std::string_view name) const;

  /// `batch` random windows of `context` ids from split "train" or "val", with their targets.
  /// Window b starts at gen.integer(0, n - context), drawn for b = 0, 1, ... in turn, so
  /// the same generator state gives the same batch. ValueError if the split has fewer than
  /// context + 1 ids.
  Batch get_batch(std::string_view split, int64_t batch, int64_t context,
                  Generator& gen = default_generator()) const;

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
  Tensor train_;
  Tensor val_;
};

}  // namespace tg::nn
