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
// TextDataset: tokenizes a whole text once and splits the ids into a training part (the
// first 1 - val_fraction) and a validation part (the rest), like nanoGPT's
// `data[:n]`, `data[n:]`. get_batch draws B random windows of T + 1 consecutive ids:
//
//   ids   ... 5 9 2 7 1 ...        x[b] = ids[i : i + T]
//             ^ i                  y[b] = ids[i + 1 : i + T + 1]   (the next id at each step)
//
// PyTorch has no built-in equivalent; this is the get_batch of Karpathy's nanoGPT with a
// character tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace tg::nn {

/// A character-level tokenizer: one id per distinct Unicode code point of a text.
class CharTokenizer {
 public:
  /// The vocabulary of `text` (UTF-8): its distinct code points, sorted. ValueError naming
  /// the byte offset if `text` is not valid UTF-8.
  explicit CharTokenizer(std::string_view text);

  /// Number of distinct characters.
  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  /// The code points, in id order.
  const std::vector<char32_t>& vocab() const { return vocab_; }

  /// The id of every character of `text`. ValueError naming the character and its
  /// position (in characters) for one that is not in the vocabulary.
  std::vector<int64_t> encode(std::string_view text) const;
  /// encode() as a 1-D int64 tensor.
  Tensor encode_tensor(std::string_view text) const;
  /// The UTF-8 text of `ids`. IndexError for an id outside [0, vocab_size()).
  std::string decode(const std::vector<int64_t>& ids) const;
  /// decode() of the elements of an int64 tensor, in row-major order.
  std::string decode(const Tensor& ids) const;

  /// {"type": "char", "vocab": "<the characters in id order>"}.
  std::string to_json() const;
  /// The tokenizer that to_json() wrote. ValueError for anything else.
  static CharTokenizer from_json(std::string_view json);

 private:
  CharTokenizer() = default;
  std::vector<char32_t> vocab_;  // sorted, distinct
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
  /// Tokenizes `text` with a given tokenizer (e.g. the one stored in a checkpoint).
  TextDataset(std::string_view text, CharTokenizer tokenizer,
              const TextDatasetOptions& options = {});
  /// The UTF-8 text file at `path` (e.g. /usr/share/dict/words, from Debian's `wamerican`).
  /// ValueError saying what was expected if it cannot be read.
  static TextDataset from_file(const std::string& path, const TextDatasetOptions& options = {});

  const CharTokenizer& tokenizer() const { return tokenizer_; }
  /// The ids of "train" or "val" as a 1-D int64 tensor.
  const Tensor& split(std::string_view name) const;

  /// `batch` random windows of `context` ids from split "train" or "val", with their targets.
  /// Window b starts at gen.integer(0, n - context), drawn for b = 0, 1, ... in turn, so
  /// the same generator state gives the same batch. ValueError if the split has fewer than
  /// context + 1 ids.
  Batch get_batch(std::string_view split, int64_t batch, int64_t context,
                  Generator& gen = default_generator()) const;

 private:
  CharTokenizer tokenizer_;
  Tensor train_;
  Tensor val_;
};

}  // namespace tg::nn
