// tests/fuzz/idx_fuzz.cpp — nn::read_idx on arbitrary files (plain or gzip: the reader
// decides by the bytes), as float32 images and as int64 labels.
#include "fuzz_util.h"
#include "nn/nn.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = tg::fuzz::write_temp_file(data, size, ".idx");
  for (const tg::DType dtype : {tg::kFloat32, tg::kInt64}) {
    try {
      const tg::Tensor t = tg::nn::read_idx(path, dtype);
      if (t.dtype() != dtype || !t.is_contiguous()) __builtin_trap();
    } catch (const tg::Error&) {
    }
  }
  return 0;
}
