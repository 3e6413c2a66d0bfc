// tests/fuzz/text_dataset_fuzz.cpp — nn::TextDataset on arbitrary bytes (the text a user's
// --data names), then a batch from each split when it is long enough. Invalid UTF-8 must
// be refused with a tg::Error; every id must be inside the vocabulary.
#include "fuzz_util.h"
#include "nn/nn.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tg::nn::TextDataset ds(tg::fuzz::bytes_of(data, size));
    const int64_t vocab = ds.tokenizer().vocab_size();
    tg::Generator gen(0);
    for (const char* split : {"train", "val"}) {
      const tg::Tensor ids = ds.split(split);
      for (const int64_t id : ids.to_vector<int64_t>())
        if (id < 0 || id >= vocab) __builtin_trap();
      if (ids.numel() > 4) {
        const tg::nn::Batch b = ds.get_batch(split, 3, 4, gen);
        if (b.x.shape() != tg::Shape{3, 4} || b.y.shape() != tg::Shape{3, 4}) __builtin_trap();
      }
    }
  } catch (const tg::Error&) {
  }
  return 0;
}
