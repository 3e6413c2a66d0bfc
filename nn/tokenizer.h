// nn/tokenizer.h — what every tokenizer of tapegrad is: text in, ids out, and back.
//
// A language model never sees text, only ids in [0, vocab_size()). A tokenizer is the
// two-way map between the two:
//
//   encode("春眠") = [ ... ]      decode(encode(text)) == text      (for every text it accepts)
//
// Two kinds live here: CharTokenizer (nn/text_data.h: one id per character) and BpeTokenizer
// (nn/bpe.h: byte-level byte-pair encoding, one id per learned piece of bytes). A model's
// checkpoint keeps its tokenizer as the JSON of to_json(); tokenizer_from_json() rebuilds
// whichever kind it was, like Hugging Face's `AutoTokenizer` reading tokenizer.json.
//
// The UTF-8 helpers at the bottom are shared by both kinds (chapter 24 of the course).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/core.h"

namespace tg::nn {

/// Text to ids and back: the interface of CharTokenizer and BpeTokenizer.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  /// Number of ids: every id encode() returns is in [0, vocab_size()).
  virtual int64_t vocab_size() const = 0;
  /// The ids of `text`.
  virtual std::vector<int64_t> encode(std::string_view text) const = 0;
  /// The text (bytes) of `ids`. IndexError naming an id outside [0, vocab_size()).
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  /// A JSON object with a "type" key ("char" or "bpe") that tokenizer_from_json() reads back.
  virtual std::string to_json() const = 0;
  /// A copy of this tokenizer, of its own kind.
  virtual std::unique_ptr<Tokenizer> clone() const = 0;

  /// encode() as a 1-D int64 tensor.
  Tensor encode_tensor(std::string_view text) const;
  /// decode() of the elements of an int64 tensor, in row-major order. DTypeError otherwise.
  std::string decode(const Tensor& ids) const;
};

/// The tokenizer whose to_json() gave `json`, of the kind its "type" names. ValueError for
/// anything else, naming what was found.
std::unique_ptr<Tokenizer> tokenizer_from_json(std::string_view json);

namespace utf8 {

/// The code points of `text`, decoded as strict UTF-8 (no overlong forms, no surrogates,
/// nothing above U+10FFFF). ValueError naming `who` and the byte offset of a bad byte.
std::vector<char32_t> decode(std::string_view text, std::string_view who);
/// Appends the UTF-8 bytes of `cp` (at most U+10FFFF) to `out`.
void append(std::string& out, char32_t cp);
/// "'a' (U+0061)" for a printable character, "U+000A" for a control character.
std::string describe(char32_t cp);
/// Number of characters in `text`: its bytes that do not continue a character (10xxxxxx).
int64_t count_chars(std::string_view text);

}  // namespace utf8
}  // namespace tg::nn
