// file: examples/course/tokenizer_utf8.cpp
// Chapter 24: characters and bytes. The UTF-8 bytes of a few characters and how their bits
// hold the code point; what a line of verse and a line of English cost in characters and in
// bytes; the chunks BPE merges within; and a character tokenizer on one poem, plain, with the
// byte fallback, and with rare characters sent to the fallback.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"

namespace {

namespace nn = tg::nn;

/// A byte's 8 bits, the UTF-8 marker bits apart from the payload: "1110 0110" for a lead byte
/// of three, "10 011000" for a continuation byte.
std::string bits(unsigned char b) {
  const int marker = b < 0x80 ? 1 : b < 0xC0 ? 2 : b < 0xE0 ? 3 : b < 0xF0 ? 4 : 5;
  std::string out;
  for (int i = 7; i >= 0; --i) {
    out += static_cast<char>('0' + ((b >> i) & 1));
    if (i == 8 - marker) out += ' ';
  }
  return out;
}

/// Newlines and spaces made visible, for chunks in brackets.
std::string visible(std::string_view s) {
  std::string out;
  for (const char c : s) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

/// Ids as the fallback tokenizer sees them: below 256 a byte, in hex; from 256 a character.
std::string ids_text(const std::vector<int64_t>& ids, bool bytes_below_256) {
  std::string out;
  for (const int64_t id : ids) {
    if (!out.empty()) out += ' ';
    out += bytes_below_256 && id < 256 ? fmt::format("{:02x}", id) : fmt::format("{}", id);
  }
  return out;
}

}  // namespace

int main() {
  // 1. Code points and their UTF-8 bytes.
  fmt::print("code point  bytes         bits (marker, then payload)\n");
  for (const char32_t cp : {U'a', U'é', U'春', U'，', U'😀'}) {
    std::string utf8;
    nn::utf8::append(utf8, cp);
    std::string hex, pattern;
    for (const char c : utf8) {
      hex += fmt::format("{:02x} ", static_cast<unsigned char>(c));
      pattern += bits(static_cast<unsigned char>(c)) + " | ";
    }
    pattern.resize(pattern.size() - 3);
    fmt::print("{:<11} {:<13} {:<44} {}\n", fmt::format("U+{:04X}", static_cast<uint32_t>(cp)), hex,
               pattern, utf8);
  }

  // 2. The same text in characters and in bytes.
  for (const std::string_view line : {"春眠不觉晓，处处闻啼鸟。", "the cat sat on the mat."}) {
    fmt::print("{:>2} characters, {:>2} bytes: {}\n", nn::utf8::count_chars(line), line.size(),
               line);
  }

  // 3. The chunks of pretokenize(): BPE never merges across them.
  for (const std::string_view line : {"春眠不觉晓，处处闻啼鸟。\n", "Ten cats  sat, 42 times!\n"}) {
    std::string chunks;
    for (const std::string_view c : nn::pretokenize(line)) chunks += "[" + visible(c) + "]";
    fmt::print("chunks: {}\n", chunks);
  }

  // 4. A character tokenizer on one poem: 20 characters, 4 marks of punctuation, 2 newlines.
  const std::string poem = "春眠不觉晓，处处闻啼鸟。\n夜来风雨声，花落知多少。\n";
  const nn::CharTokenizer plain(poem);
  fmt::print("plain: {} ids; encode(\"夜来风雨\") = [{}]\n", plain.vocab_size(),
             ids_text(plain.encode("夜来风雨"), false));
  try {
    (void)plain.encode("秋风");
  } catch (const tg::ValueError& e) {
    fmt::print("plain: encode(\"秋风\"): {}\n", e.what());
  }
  const nn::CharTokenizer fallback(poem, {.byte_fallback = true});
  const std::vector<int64_t> autumn = fallback.encode("秋风");
  fmt::print("byte fallback: {} ids; encode(\"秋风\") = [{}], decoded \"{}\"\n",
             fallback.vocab_size(), ids_text(autumn, true), fallback.decode(autumn));
  const nn::CharTokenizer rare(poem, {.byte_fallback = true, .min_count = 2});
  std::string kept;
  for (const char32_t cp : rare.vocab()) {
    std::string c;
    nn::utf8::append(c, cp);
    kept += " [" + visible(c) + "]";
  }
  fmt::print("min_count 2: {} ids, the characters kept:{}\n", rare.vocab_size(), kept);
  const std::string first = "春眠不觉晓，处处闻啼鸟。";
  const std::vector<int64_t> ids = rare.encode(first);
  fmt::print("min_count 2: encode(\"{}\") = {} ids for {} characters:\n  [{}]\n", first, ids.size(),
             nn::utf8::count_chars(first), ids_text(ids, true));
  fmt::print("decode(encode(poem)) == poem: {} {} {}\n", plain.decode(plain.encode(poem)) == poem,
             fallback.decode(fallback.encode(poem)) == poem,
             rare.decode(rare.encode(poem)) == poem);
}
