// core/half.cpp — exact conversions between float/double and the 16-bit formats.
//
// A binary floating-point format with E exponent bits and M mantissa bits stores
//   normal:    (-1)^s * 1.m * 2^(e - bias),   1 <= e <= 2^E - 2,  bias = 2^(E-1) - 1
//   subnormal: (-1)^s * 0.m * 2^(1 - bias),   e = 0
//   Inf / NaN: e = 2^E - 1 (m = 0 is Inf, anything else NaN)
// Narrowing keeps the sign, then rounds |x| to a multiple of the target's spacing at
// that magnitude. All arithmetic is on integers, so the result is exact and the same
// on every machine.
//
// The bulk conversions at the end (detail::widen, detail::narrow) follow the same rules
// without a branch, so that their loops become vector code.
#include "core/half.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <type_traits>

#include "core/simd.h"

namespace tg::detail {
namespace {

// v >> shift, rounded to nearest with ties to even (shift may exceed 63: result 0).
uint64_t shift_right_rne(uint64_t v, int shift) {
  if (shift <= 0) return v;
  if (shift >= 64) return 0;  // v < 2^53 here, so v / 2^64 < 0.5: rounds to 0
  const uint64_t q = v >> shift;
  const uint64_t rem = v & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

}  // namespace

template <int kExp, int kMant, class Src>
uint16_t narrow_bits(Src x) {
  using Bits = std::conditional_t<sizeof(Src) == 4, uint32_t, uint64_t>;
  constexpr int kSrcMant = std::numeric_limits<Src>::digits - 1;  // 23 or 52
  constexpr int kSrcBits = sizeof(Src) * 8;
  constexpr int kSrcExpMax = (1 << (kSrcBits - 1 - kSrcMant)) - 1;  // 255 or 2047
  constexpr int kSrcBias = kSrcExpMax / 2;
  constexpr int kBias = (1 << (kExp - 1)) - 1;
  constexpr uint16_t kExpAllOnes = ((1u << kExp) - 1) << kMant;

  const Bits b = std::bit_cast<Bits>(x);
  const uint16_t sign = static_cast<uint16_t>((b >> (kSrcBits - 1)) << (kExp + kMant));
  const int src_exp = static_cast<int>((b >> kSrcMant) & kSrcExpMax);
  const uint64_t src_mant = b & ((Bits{1} << kSrcMant) - 1);

  if (src_exp == kSrcExpMax) {
    if (src_mant == 0) return sign | kExpAllOnes;  // ±Inf
    // NaN: keep the top payload bits; if they are all zero, set the quiet bit so the
    // result does not turn into Inf.
    uint16_t payload = static_cast<uint16_t>(src_mant >> (kSrcMant - kMant));
    if (payload == 0) payload = uint16_t{1} << (kMant - 1);
    return sign | kExpAllOnes | payload;
  }
  if (src_exp == 0 && src_mant == 0) return sign;  // ±0

  // |x| = significand * 2^(e - kSrcMant). A source subnormal has no implicit 1 and the
  // exponent of the smallest normal (float subnormals can still be bf16 subnormals).
  const bool src_normal = src_exp != 0;
  const int e = (src_normal ? src_exp : 1) - kSrcBias;
  const uint64_t significand = src_mant | (uint64_t{src_normal} << kSrcMant);
  uint64_t magnitude;
  if (e >= 1 - kBias) {
    // Normal in the target: keep kMant fraction bits. A carry out of the mantissa
    // (1.11..1 rounding up to 10.0) lands in the exponent field, which is exactly
    // the next binade; past the largest exponent it becomes the Inf pattern.
    // (For a source subnormal q < 2^kMant and the sum below is just q: a subnormal.)
    const uint64_t q = shift_right_rne(significand, kSrcMant - kMant);
    magnitude = (static_cast<uint64_t>(e + kBias) << kMant) + q - (uint64_t{1} << kMant);
    if (magnitude >= kExpAllOnes) return sign | kExpAllOnes;
  } else {
    // Subnormal in the target: count in units of 2^(1 - bias - kMant).
    magnitude = shift_right_rne(significand, kSrcMant - kMant + (1 - kBias - e));
  }
  return static_cast<uint16_t>(sign | magnitude);
}

template <int kExp, int kMant>
float widen_bits(uint16_t bits) {
  // bfloat16 is the top half of a float32, subnormals and NaNs included.
  if constexpr (kExp == 8) return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);

  // float16 has fewer exponent and mantissa bits than float: re-bias the exponent and
  // shift the mantissa up; a float16 subnormal is normalised first.
  constexpr int kBias = (1 << (kExp - 1)) - 1;
  constexpr uint32_t kExpMax = (1u << kExp) - 1;
  const uint32_t sign = static_cast<uint32_t>(bits >> (kExp + kMant)) << 31;
  uint32_t exp = (bits >> kMant) & kExpMax;
  uint32_t mant = bits & ((1u << kMant) - 1);

  uint32_t out;
  if (exp == kExpMax) {
    out = sign | 0x7f800000u | (mant << (23 - kMant));  // Inf, or NaN with its payload
  } else if (exp == 0) {
    if (mant == 0) {
      out = sign;  // ±0
    } else {
      // 0.m * 2^(1-bias): shift m up until its leading 1 becomes the implicit bit.
      int e = 1 - kBias;
      while ((mant & (1u << kMant)) == 0) {
        mant <<= 1;
        --e;
      }
      mant &= (1u << kMant) - 1;
      out = sign | (static_cast<uint32_t>(e + 127) << 23) | (mant << (23 - kMant));
    }
  } else {
    out = sign | ((exp - kBias + 127) << 23) | (mant << (23 - kMant));
  }
  return std::bit_cast<float>(out);
}

// ---------------------------------------------------------------- many values at once
// The rules above once more, for float <-> bfloat16/float16, as straight-line code: every
// candidate result is computed and one is selected (a vector blend), with no branch and no
// loop per value, so that simd_for's blocks become vector code. The tests hold them to the
// scalar functions above, bit for bit, on every 16-bit pattern and on the special floats.
// (F16C's vcvtps2ph would narrow 16 floats in one instruction, but it quiets a signalling
// NaN, 0x7f810000 -> 0x7e08 where the rule above keeps 0x7c08: plain code keeps one rule.)
namespace {

/// float -> bfloat16: round the low 16 bits of the float away, to nearest even.
[[gnu::always_inline]] inline uint16_t bf16_from_float_bits(uint32_t b) {
  // Adding 0x7fff + (the lowest kept bit) carries into the kept bits exactly when the
  // dropped half is above 0x8000, or equal to it with the kept part odd (ties to even). The
  // carry may run on into the exponent: the next binade, or Inf past the largest value.
  const uint32_t rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
  // NaN: the top of the payload, and the quiet bit if nothing of it is left (else: Inf).
  const uint32_t nan = (b >> 16) | ((b & 0x7f0000u) == 0 ? 0x40u : 0u);
  return static_cast<uint16_t>((b & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

/// float -> float16: re-bias the exponent and round 13 bits away as above; below float16's
/// normal range, round to a multiple of its subnormal spacing 2^-24.
[[gnu::always_inline]] inline uint16_t half_from_float_bits(uint32_t b) {
  const uint32_t sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
  // Normal: exponent bias 127 -> 15. A carry past the largest exponent gives 0x7c00 (Inf)
  // or more (from Inf and huge values): clamped to Inf.
  const uint32_t normal = (a - ((127u - 15u) << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  // Subnormal (|x| < 2^-14): 0.5f + |x| lies in [0.5, 1), where float's spacing is 2^-24,
  // float16's subnormal spacing, so the float addition itself rounds |x| to a multiple of it
  // (to nearest even, as 0.5f's last bit is 0); the bits above 0.5f's count the multiples.
  const uint32_t sub = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + 0.5f) - 0x3f000000u;
  const uint32_t payload = (a >> 13) & 0x3ffu;
  const uint32_t nan = 0x7c00u | payload | (payload == 0 ? 0x200u : 0u);
  const uint32_t magnitude = a > 0x7f800000u   ? nan
                             : a < 0x38800000u ? sub
                                               : std::min(normal, 0x7c00u);
  return static_cast<uint16_t>(sign | magnitude);
}

/// float16 -> float, exactly.
[[gnu::always_inline]] inline float float_from_half_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, em = h & 0x7fffu;
  // Normal: exponent and mantissa shifted into place, the exponent re-biased from 15 to 127.
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  // Inf or NaN: the largest exponent stays the largest, the payload moves up.
  const uint32_t inf_nan = (em << 13) | 0x7f800000u;
  // Zero or subnormal: em is the mantissa m, the value m * 2^-24. Narrowing's trick run
  // backwards: with m in the low bits of 0.5f's pattern the float is 0.5 + m * 2^-24, and
  // subtracting 0.5f leaves m * 2^-24, exactly.
  const uint32_t sub = std::bit_cast<uint32_t>(std::bit_cast<float>(em | 0x3f000000u) - 0.5f);
  const uint32_t finite = em < 0x400u ? sub : normal;
  return std::bit_cast<float>(sign | (em >= 0x7c00u ? inf_nan : finite));
}

}  // namespace

void widen(const BFloat16* __restrict src, float* __restrict dst, int64_t n) {
  simd_for(n, [&](int64_t i) { dst[i] = std::bit_cast<float>(uint32_t{src[i].bits} << 16); });
}

void widen(const Half* __restrict src, float* __restrict dst, int64_t n) {
  simd_for(n, [&](int64_t i) { dst[i] = float_from_half_bits(src[i].bits); });
}

void narrow(const float* __restrict src, BFloat16* __restrict dst, int64_t n) {
  simd_for(n,
           [&](int64_t i) { dst[i].bits = bf16_from_float_bits(std::bit_cast<uint32_t>(src[i])); });
}

void narrow(const float* __restrict src, Half* __restrict dst, int64_t n) {
  simd_for(n,
           [&](int64_t i) { dst[i].bits = half_from_float_bits(std::bit_cast<uint32_t>(src[i])); });
}

template uint16_t narrow_bits<5, 10>(float);
template uint16_t narrow_bits<5, 10>(double);
template uint16_t narrow_bits<8, 7>(float);
template uint16_t narrow_bits<8, 7>(double);
template float widen_bits<5, 10>(uint16_t);
template float widen_bits<8, 7>(uint16_t);

}  // namespace tg::detail
