// nn/tokenizer.cpp — the tokenizer interface's shared parts, and strict UTF-8.
#include "nn/tokenizer.h"

#include <nlohmann/json.hpp>

#include "nn/bpe.h"
#include "nn/text_data.h"

namespace tg::nn {

Tensor Tokenizer::encode_tensor(std::string_view text) const { return tensor(encode(text)); }

std::string Tokenizer::decode(const Tensor& ids) const {
  TG_CHECK(ids.dtype() == kInt64, DTypeError,
           "Tokenizer::decode: ids must be int64, got {} of shape {}", ids.dtype(), ids.shape());
  return decode(ids.to_vector<int64_t>());
}

std::unique_ptr<Tokenizer> tokenizer_from_json(std::string_view json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    tg::detail::raise<ValueError>("tokenizer_from_json: not valid JSON ({})", e.what());
  }
  const bool typed = j.is_object() && j.contains("type") && j["type"].is_string();
  const std::string type = typed ? j["type"].get<std::string>() : "";
  if (type == "char") return std::make_unique<CharTokenizer>(CharTokenizer::from_json(json));
  if (type == "bpe") return std::make_unique<BpeTokenizer>(BpeTokenizer::from_json(json));
  tg::detail::raise<ValueError>(
      "tokenizer_from_json: expected an object whose \"type\" is \"char\" or \"bpe\", got {}",
      j.dump().substr(0, 200));
}

namespace utf8 {

// UTF-8 encodes a code point in 1 to 4 bytes:
//   U+0000  .. U+007F    0xxxxxxx
//   U+0080  .. U+07FF    110xxxxx 10xxxxxx
//   U+0800  .. U+FFFF    1110xxxx 10xxxxxx 10xxxxxx          (minus surrogates D800..DFFF)
//   U+10000 .. U+10FFFF  11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
// A valid text uses the shortest form of each code point (no "overlong" encodings).
std::vector<char32_t> decode(std::string_view text, std::string_view who) {
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

void append(std::string& out, char32_t cp) {
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
  append(c, cp);
  return fmt::format("'{}' (U+{:04X})", c, static_cast<uint32_t>(cp));
}

int64_t count_chars(std::string_view text) {
  int64_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace utf8
}  // namespace tg::nn
