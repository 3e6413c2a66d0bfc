// core/half.h — float16 and bfloat16 as storage types.
//
// Both are 16-bit IEEE-style binary formats; they differ in how they split the bits:
//
//   float16   1 sign | 5 exponent (bias 15)  | 10 mantissa   max 65504, eps 2^-10
//   bfloat16  1 sign | 8 exponent (bias 127) |  7 mantissa   max ~3.4e38, eps 2^-7
//
// tapegrad stores them but never computes in them: kernels widen to float, compute,
// and narrow the result once. Widening is exact (every f16/bf16 value is a float).
// Narrowing rounds to nearest, ties to even, straight from the source (float or
// double), so a double is never rounded twice. Out-of-range values become ±Inf,
// tiny ones become subnormals or ±0, and NaN stays NaN with its sign and the top
// bits of its payload (PyTorch instead replaces every NaN by one canonical NaN). PyTorch
// also narrows a double through float, rounding twice; the two differ only for doubles
// within about 2^-29 (relative) of a halfway point, where tapegrad's result is the exact one.
#pragma once

#include <cstdint>

namespace tg {

namespace detail {
/// Rounds `x` to a binary format with kExp exponent and kMant mantissa bits; returns its bits.
template <int kExp, int kMant, class Src>
uint16_t narrow_bits(Src x);
/// Widens the bits of such a format to float (exact).
template <int kExp, int kMant>
float widen_bits(uint16_t bits);
}  // namespace detail

/// IEEE 754 binary16. Convert explicitly: `Half h(1.5f); float f = float(h);`.
struct Half {
  uint16_t bits = 0;

  Half() = default;
  explicit Half(float x) : bits(detail::narrow_bits<5, 10>(x)) {}
  explicit Half(double x) : bits(detail::narrow_bits<5, 10>(x)) {}
  explicit operator float() const { return detail::widen_bits<5, 10>(bits); }
  static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

/// bfloat16: the top half of a float32, with float32's range and 8 bits of precision.
struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float x) : bits(detail::narrow_bits<8, 7>(x)) {}
  explicit BFloat16(double x) : bits(detail::narrow_bits<8, 7>(x)) {}
  explicit operator float() const { return detail::widen_bits<8, 7>(bits); }
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

namespace detail {
/// The same conversions over n contiguous values, bit for bit (each dst[i] is what the
/// scalar conversion of src[i] gives), written as loops the compiler turns into vector code.
/// Tensor::copy_ uses them between contiguous tensors; kernels may call them on raw buffers.
/// (The float -> float16 one assumes the default rounding mode, round to nearest even.)
void widen(const BFloat16* src, float* dst, int64_t n);
void widen(const Half* src, float* dst, int64_t n);
void narrow(const float* src, BFloat16* dst, int64_t n);
void narrow(const float* src, Half* dst, int64_t n);
}  // namespace detail

// The two formats are instantiated in half.cpp; nothing else is.
extern template uint16_t detail::narrow_bits<5, 10>(float);
extern template uint16_t detail::narrow_bits<5, 10>(double);
extern template uint16_t detail::narrow_bits<8, 7>(float);
extern template uint16_t detail::narrow_bits<8, 7>(double);
extern template float detail::widen_bits<5, 10>(uint16_t);
extern template float detail::widen_bits<8, 7>(uint16_t);

}  // namespace tg
