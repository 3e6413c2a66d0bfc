// tests/fuzz/tokenizer_fuzz.cpp — CharTokenizer::from_json on arbitrary text. A vocabulary
// it accepts must round-trip: to_json gives the same JSON back, and its own characters
// encode and decode to themselves (the byte-fallback ids, alone, need not be valid UTF-8).
#include "fuzz_util.h"
#include "nn/nn.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tg::nn::CharTokenizer tok = tg::nn::CharTokenizer(std::string_view());
  try {
    tok = tg::nn::CharTokenizer::from_json(tg::fuzz::bytes_of(data, size));
  } catch (const tg::Error&) {
    return 0;
  }
  const tg::nn::CharTokenizer again = tg::nn::CharTokenizer::from_json(tok.to_json());
  if (again.to_json() != tok.to_json()) __builtin_trap();
  std::vector<int64_t> ids;
  for (int64_t id = tok.first_char_id(); id < tok.vocab_size(); ++id) ids.push_back(id);
  if (tok.encode(tok.decode(ids)) != ids) __builtin_trap();
  return 0;
}
