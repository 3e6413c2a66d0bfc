// nn/text_data.cpp — the character vocabulary (with its byte fallback), and random windows.
#include "nn/text_data.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "nn/corpus.h"

namespace tg::nn {

// ---- CharTokenizer

CharTokenizer::CharTokenizer(std::string_view text, const CharTokenizerOptions& options)
    : byte_fallback_(options.byte_fallback) {
  TG_CHECK(options.min_count >= 1 && (options.min_count == 1 || options.byte_fallback), ValueError,
           "CharTokenizer: min_count {} needs byte_fallback (a character seen fewer times has "
           "no id of its own, so it must be encoded as bytes); min_count must be at least 1",
           options.min_count);
  std::vector<char32_t> chars = utf8::decode(text, "CharTokenizer");
  std::ranges::sort(chars);
  // Equal code points are now adjacent: keep one of each run that is long enough.
  for (size_t i = 0; i < chars.size();) {
    size_t j = i;
    while (j < chars.size() && chars[j] == chars[i]) ++j;
    if (static_cast<int64_t>(j - i) >= options.min_count) vocab_.push_back(chars[i]);
    i = j;
  }
}

int64_t CharTokenizer::vocab_size() const {
  return first_char_id() + static_cast<int64_t>(vocab_.size());
}

std::vector<int64_t> CharTokenizer::encode(std::string_view text) const {
  const std::vector<char32_t> chars = utf8::decode(text, "CharTokenizer::encode");
  std::vector<int64_t> ids;
  ids.reserve(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) {
    const auto it = std::ranges::lower_bound(vocab_, chars[i]);  // the vocab is sorted
    if (it != vocab_.end() && *it == chars[i]) {
      ids.push_back(first_char_id() + (it - vocab_.begin()));
      continue;
    }
    TG_CHECK(byte_fallback_, ValueError,
             "CharTokenizer::encode: character {} at position {} is not in the vocabulary of "
             "{} characters",
             utf8::describe(chars[i]), i, vocab_.size());
    std::string bytes;  // the byte fallback: a byte's id is its value
    utf8::append(bytes, chars[i]);
    for (const char b : bytes) ids.push_back(static_cast<unsigned char>(b));
  }
  return ids;
}

std::string CharTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    TG_CHECK(ids[i] >= 0 && ids[i] < vocab_size(), IndexError,
             "CharTokenizer::decode: id {} at position {} is outside the vocabulary [0, {})",
             ids[i], i, vocab_size());
    if (ids[i] < first_char_id()) {
      out += static_cast<char>(ids[i]);  // a byte of a rare character
    } else {
      utf8::append(out, vocab_[static_cast<size_t>(ids[i] - first_char_id())]);
    }
  }
  return out;
}

// nlohmann/json (linked privately, as in core/) writes and parses the JSON: it escapes
// control characters and quotes, which a hand-written format would have to get right too.
std::string CharTokenizer::to_json() const {
  std::string chars;
  for (const char32_t cp : vocab_) utf8::append(chars, cp);
  nlohmann::json j{{"type", "char"}, {"vocab", chars}};
  if (byte_fallback_) j["byte_fallback"] = true;
  return j.dump();
}

CharTokenizer CharTokenizer::from_json(std::string_view json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    tg::detail::raise<ValueError>("CharTokenizer::from_json: not valid JSON ({})", e.what());
  }
  TG_CHECK(j.is_object() && j.contains("type") && j["type"] == "char" && j.contains("vocab") &&
               j["vocab"].is_string() &&
               (!j.contains("byte_fallback") || j["byte_fallback"].is_boolean()),
           ValueError,
           "CharTokenizer::from_json: expected {{\"type\": \"char\", \"vocab\": \"...\"}} "
           "(and optionally \"byte_fallback\": true), got {}",
           j.dump().substr(0, 200));
  CharTokenizer t;
  t.vocab_ = utf8::decode(j["vocab"].get<std::string>(), "CharTokenizer::from_json");
  t.byte_fallback_ = j.value("byte_fallback", false);
  for (size_t i = 1; i < t.vocab_.size(); ++i) {
    TG_CHECK(t.vocab_[i - 1] < t.vocab_[i], ValueError,
             "CharTokenizer::from_json: the vocabulary must be sorted and distinct, but {} "
             "comes after {} (ids {} and {})",
             utf8::describe(t.vocab_[i]), utf8::describe(t.vocab_[i - 1]), i, i - 1);
  }
  return t;
}

// ---- TextDataset

TextDataset::TextDataset(std::string_view text, const TextDatasetOptions& options)
    : TextDataset(text, CharTokenizer(text), options) {}

TextDataset::TextDataset(std::string_view text, const Tokenizer& tokenizer,
                         const TextDatasetOptions& options)
    : tokenizer_(tokenizer.clone()) {
  TG_CHECK(options.val_fraction >= 0.0 && options.val_fraction < 1.0, ValueError,
           "TextDataset: val_fraction must be in [0, 1), got {}", options.val_fraction);
  const Tensor ids = tokenizer_->encode_tensor(text);
  const int64_t n = ids.numel();
  // floor(n * fraction) ids for validation: a fraction of 0.1 of 1005 ids leaves 905 to train.
  const auto n_val = static_cast<int64_t>(static_cast<double>(n) * options.val_fraction);
  train_ = ids.narrow(0, 0, n - n_val);
  val_ = ids.narrow(0, n - n_val, n_val);
}

TextDataset TextDataset::from_file(const std::string& path, const TextDatasetOptions& options) {
  return TextDataset(read_text_file(path, "TextDataset", "a UTF-8 text file"), options);
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
