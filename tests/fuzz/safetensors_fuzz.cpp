// tests/fuzz/safetensors_fuzz.cpp — tg::safetensors::parse on arbitrary bytes. What it
// accepts must survive a round trip: serialize(parse(x)) parses to the same tensors.
#include <cstring>

#include "core/core.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tg::safetensors::Contents c;
  try {
    c = tg::safetensors::parse(tg::fuzz::bytes_of(data, size), "fuzz input");
  } catch (const tg::Error&) {
    return 0;  // refused with a clear error: fine
  }
  const tg::safetensors::Contents again =
      tg::safetensors::parse(tg::safetensors::serialize(c.tensors, c.metadata), "round trip");
  if (again.metadata != c.metadata || again.tensors.size() != c.tensors.size()) __builtin_trap();
  for (const auto& [name, t] : c.tensors) {
    const tg::Tensor& u = again.tensors.at(name);
    if (u.shape() != t.shape() || u.dtype() != t.dtype() ||
        std::memcmp(u.raw_data(), t.raw_data(),
                    static_cast<size_t>(t.numel()) * t.element_size()) != 0)
      __builtin_trap();
  }
  return 0;
}
