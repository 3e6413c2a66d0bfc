// nn/text_data.cpp — UTF-8 decoding, the character vocabulary, and random windows.
#include "nn/text_data.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tg::nn {
namespace {

// UTF-8 encodes a code point in 1 to 4 bytes:
//   U+0000  .. U+007F    0xxxxxxx
//   U+0080  .. U+07FF    110xxxxx 10xxxxxx
//   U+0800  .. U+FFFF    1110xxxx 10xxxxxx 10xxxxxx          (minus surrogates D800..DFFF)
//   U+10000 .. U+10FFFF  11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
// A valid text uses the shortest form of each code point (no "overlong" encodings).
std::vector<char32_t> decode_utf8(std::string_view text, std::string_view who) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    // The lead byte gives the length, the payload bits it carries, and the smallest code
    // point that needs this many bytes.
    size_t len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if (lead < 0x80) {
      len = 1, cp = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      len = 2, cp = lead & 0x1Fu, min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      len = 3, cp = lead & 0x0Fu, min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      len = 4, cp = lead & 0x07u, min = 0x10000;
    }
    TG_CHECK(len != 0, ValueError,
             "{}: invalid UTF-8 at byte offset {}: byte 0x{:02x} cannot start a character", who, i,
             lead);
    TG_CHECK(i + len <= text.size(), ValueError,
             "{}: invalid UTF-8 at byte offset {}: a {}-byte character is cut off by the end of "
             "the text",
             who, i, len);
    for (size_t k = 1; k < len; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      TG_CHECK((next & 0xC0) == 0x80, ValueError,
               "{}: invalid UTF-8 at byte offset {}: expected a continuation byte 10xxxxxx, got "
               "0x{:02x}",
               who, i + k, next);
      cp = (cp << 6) | (next & 0x3Fu);
    }
    TG_CHECK(cp >= min, ValueError,
             "{}: invalid UTF-8 at byte offset {}: overlong {}-byte encoding of U+{:04X}", who, i,
             len, static_cast<uint32_t>(cp));
    TG_CHECK(cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF), ValueError,
             "{}: invalid UTF-8 at byte offset {}: U+{:04X} is not a Unicode character", who, i,
             static_cast<uint32_t>(cp));
    out.push_back(cp);
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// "'a' (U+0061)" for a printable character, "U+000A" for a control character.
std::string describe(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return fmt::format("U+{:04X}", static_cast<uint32_t>(cp));
  std::string c;
  append_utf8(c, cp);
  return fmt::format("'{}' (U+{:04X})", c, static_cast<uint32_t>(cp));
}

}  // namespace

// ---- CharTokenizer

CharTokenizer::CharTokenizer(std::string_view text) : vocab_(decode_utf8(text, "CharTokenizer")) {
  std::ranges::sort(vocab_);
  const auto dup = std::ranges::unique(vocab_);
  vocab_.erase(dup.begin(), dup.end());
}

std::vector<int64_t> CharTokenizer::encode(std::string_view text) const {
  const std::vector<char32_t> chars = decode_utf8(text, "CharTokenizer::encode");
  std::vector<int64_t> ids(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) {
    const auto it = std::ranges::lower_bound(vocab_, chars[i]);  // the vocab is sorted
    TG_CHECK(it != vocab_.end() && *it == chars[i], ValueError,
             "CharTokenizer::encode: character {} at position {} is not in the vocabulary of "
             "{} characters",
             describe(chars[i]), i, vocab_.size());
    ids[i] = it - vocab_.begin();
  }
  return ids;
}

Tensor CharTokenizer::encode_tensor(std::string_view text) const { return tensor(encode(text)); }

std::string CharTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    TG_CHECK(ids[i] >= 0 && ids[i] < vocab_size(), IndexError,
             "CharTokenizer::decode: id {} at position {} is outside the vocabulary [0, {})",
             ids[i], i, vocab_size());
    append_utf8(out, vocab_[static_cast<size_t>(ids[i])]);
  }
  return out;
}

std::string CharTokenizer::decode(const Tensor& ids) const {
  TG_CHECK(ids.dtype() == kInt64, DTypeError,
           "CharTokenizer::decode: ids must be int64, got {} of shape {}", ids.dtype(),
           ids.shape());
  return decode(ids.to_vector<int64_t>());
}

// nlohmann/json (linked privately, as in core/) writes and parses the JSON: it escapes
// control characters and quotes, which a hand-written format would have to get right too.
std::string CharTokenizer::to_json() const {
  std::string chars;
  for (const char32_t cp : vocab_) append_utf8(chars, cp);
  return nlohmann::json{{"type", "char"}, {"vocab", chars}}.dump();
}

CharTokenizer CharTokenizer::from_json(std::string_view json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    detail::raise<ValueError>("CharTokenizer::from_json: not valid JSON ({})", e.what());
  }
  TG_CHECK(j.is_object() && j.contains("type") && j["type"] == "char" && j.contains("vocab") &&
               j["vocab"].is_string(),
           ValueError,
           "CharTokenizer::from_json: expected {{\"type\": \"char\", \"vocab\": \"...\"}}, got "
           "{}",
           j.dump());
  CharTokenizer t;
  t.vocab_ = decode_utf8(j["vocab"].get<std::string>(), "CharTokenizer::from_json");
  for (size_t i = 1; i < t.vocab_.size(); ++i) {
    TG_CHECK(t.vocab_[i - 1] < t.vocab_[i], ValueError,
             "CharTokenizer::from_json: the vocabulary must be sorted and distinct, but {} "
             "comes after {} (ids {} and {})",
             describe(t.vocab_[i]), describe(t.vocab_[i - 1]), i, i - 1);
  }
  return t;
}

// ---- TextDataset

TextDataset::TextDataset(std::string_view text, const TextDatasetOptions& options)
    : TextDataset(text, CharTokenizer(text), options) {}

TextDataset::TextDataset(std::string_view text, CharTokenizer tokenizer,
                         const TextDatasetOptions& options)
    : tokenizer_(std::move(tokenizer)) {
  TG_CHECK(options.val_fraction >= 0.0 && options.val_fraction < 1.0, ValueError,
           "TextDataset: val_fraction must be in [0, 1), got {}", options.val_fraction);
  const Tensor ids = tokenizer_.encode_tensor(text);
  const int64_t n = ids.numel();
  // floor(n * fraction) ids for validation: a fraction of 0.1 of 1005 ids leaves 905 to train.
  const auto n_val = static_cast<int64_t>(static_cast<double>(n) * options.val_fraction);
  train_ = ids.narrow(0, 0, n - n_val);
  val_ = ids.narrow(0, n - n_val, n_val);
}

TextDataset TextDataset::from_file(const std::string& path, const TextDatasetOptions& options) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  const std::string hint = path.starts_with("/usr/share/dict/")
                               ? "; Debian's word lists come with `apt-get install wamerican`"
                               : "";
  TG_CHECK(in.good(), ValueError,
           "TextDataset: cannot open '{}' ({}); expected a UTF-8 text file{}", path,
           errno != 0 ? std::strerror(errno) : "unknown error", hint);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  TG_CHECK(!in.bad(), ValueError, "TextDataset: reading '{}' failed", path);
  return TextDataset(buffer.str(), options);
}

const Tensor& TextDataset::split(std::string_view name) const {
  if (name == "train") return train_;
  TG_CHECK(name == "val", ValueError, "TextDataset: split must be \"train\" or \"val\", got \"{}\"",
           name);
  return val_;
}

Batch TextDataset::get_batch(std::string_view split_name, int64_t batch, int64_t context,
                             Generator& gen) const {
  const Tensor& ids = split(split_name);
  TG_CHECK(batch > 0 && context > 0, ValueError,
           "TextDataset::get_batch: batch and context must be positive, got batch {} and "
           "context {}",
           batch, context);
  const int64_t n = ids.numel();
  TG_CHECK(n >= context + 1, ValueError,
           "TextDataset::get_batch: the \"{}\" split has {} ids, too few for windows of context "
           "{} (it needs at least {}: the inputs and the one next id)",
           split_name, n, context, context + 1);
  const int64_t* src = ids.data<int64_t>();  // a narrow() of a contiguous tensor: contiguous
  Batch out{empty({batch, context}, kInt64), empty({batch, context}, kInt64)};
  int64_t* x = out.x.data<int64_t>();
  int64_t* y = out.y.data<int64_t>();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = gen.integer(0, n - context);  // the last start is n - context - 1
    std::copy_n(src + start, context, x + b * context);
    std::copy_n(src + start + 1, context, y + b * context);
  }
  return out;
}

}  // namespace tg::nn
