// file: examples/course/tensors_half.cpp
// Chapter 1: what float16 and bfloat16 keep of a number. Rounds a few values to both
// formats and prints what comes back (and the 16 bits), then shows why tapegrad adds up
// half-precision numbers in float32 and why it rounds a double only once.
#include <fmt/format.h>

#include "core/core.h"

namespace {

void row(float x) {
  const tg::Half h(x);
  const tg::BFloat16 b(x);
  fmt::print("{:>14} | {:>14} {:#06x} | {:>14} {:#06x}\n", x, float(h), h.bits, float(b), b.bits);
}

}  // namespace

int main() {
  fmt::print("{:>14} | {:>21} | {:>21}\n", "float32 input", "float16 (bits)", "bfloat16 (bits)");
  row(1.0f);
  row(1.0f / 3.0f);
  // The top of float16's range: 65504 is the largest finite value.
  row(65504.0f);
  row(65519.0f);
  row(65520.0f);
  row(1e30f);
  // Near 2048 float16 can only count in steps of 2; ties go to the even neighbour.
  row(2048.0f);
  row(2049.0f);
  row(2050.0f);
  row(2051.0f);
  // bfloat16 keeps fewer bits: near 256 it counts in steps of 2.
  row(256.0f);
  row(257.0f);
  // The bottom of float16's range: normals stop at 2^-14, subnormals at 2^-24.
  row(0x1p-14f);
  row(0x1p-24f);
  row(0x1p-25f);
  row(1e-8f);

  // Adding 1 ten thousand times. In float16 the sum stops at 2048: from there on,
  // 2048 + 1 = 2049 rounds back to 2048 every time.
  tg::Half sum16(0.0f);
  float sum32 = 0.0f;
  for (int i = 0; i < 10000; ++i) {
    sum16 = tg::Half(float(sum16) + 1.0f);  // compute in float, store in float16
    sum32 += 1.0f;
  }
  fmt::print("\nsum of 10000 ones: float16 accumulator {}, float32 accumulator {}\n", float(sum16),
             sum32);

  // Rounding twice can differ from rounding once. v lies just above the float16 tie
  // 1 + 2^-11: rounded directly it goes up, but via float it first lands exactly on the
  // tie, which then rounds to even (down). tapegrad always rounds once, from the source.
  const double v = 1.0 + 0x1p-11 + 0x1p-40;
  fmt::print("\nv = {}: float16 directly {}, via float32 {}\n", v, float(tg::Half(v)),
             float(tg::Half(static_cast<float>(v))));

  // Tensors of either dtype print their exact stored values.
  const tg::Tensor x = tg::tensor({0.1f, 1.f / 3.f, 2049.f, 70000.f});
  fmt::print("\n{}\n{}\n{}\n", x, x.to(tg::kFloat16), x.to(tg::kBFloat16));
}
