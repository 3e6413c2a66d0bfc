// tests/fuzz/bpe_fuzz.cpp — the byte-level BPE tokenizer and the fortune-file cleaner on
// arbitrary bytes. The first byte picks what the rest is:
//   0: the JSON of BpeTokenizer::from_json      1: a file for BpeTokenizer::load
//   2: a training text (train on it, 300 ids)    3: a fortune file for parse_fortunes
// A tokenizer that is accepted must encode any text (here: the input itself) and decode it
// back exactly, and its saved forms must read back the same; a cleaned fortune file must
// hold no escape byte and no empty entry.
#include "fuzz_util.h"
#include "nn/nn.h"

namespace {

void check_tokenizer(const tg::nn::BpeTokenizer& tok, const std::string& text) {
  if (tok.decode(tok.encode(text)) != text) __builtin_trap();
  if (tok.decode(tok.encode_with_special(text)) != text) __builtin_trap();
  if (tg::nn::BpeTokenizer::from_json(tok.to_json()).to_json() != tok.to_json()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest = tg::fuzz::bytes_of(data + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0: check_tokenizer(tg::nn::BpeTokenizer::from_json(rest), rest); break;
      case 1:
        check_tokenizer(
            tg::nn::BpeTokenizer::load(tg::fuzz::write_temp_file(data + 1, size - 1, ".bpe")),
            rest);
        break;
      case 2: check_tokenizer(tg::nn::BpeTokenizer::train(rest, {.vocab_size = 300}), rest); break;
      default:
        for (const std::string& entry :
             tg::nn::parse_fortunes(rest, {.keep_titles = data[0] >= 128})) {
          if (entry.empty() || entry.find('\x1b') != std::string::npos) __builtin_trap();
        }
    }
  } catch (const tg::Error&) {
    return 0;
  }
  return 0;
}
