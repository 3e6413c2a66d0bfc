// tests/core/half_test.cpp — float16/bfloat16 conversions, checked over all 65,536 bit
// patterns in both directions against an independent model of each format.
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "test_util.h"

namespace {

using tg::BFloat16;
using tg::Half;

// The value a (kExp, kMant) bit pattern denotes, from the format's definition with
// ldexp (exact in double), independent of the bit tricks in core/half.cpp.
template <int kExp, int kMant>
double reference_value(uint16_t bits) {
  const int bias = (1 << (kExp - 1)) - 1;
  const int exp = (bits >> kMant) & ((1 << kExp) - 1);
  const int mant = bits & ((1 << kMant) - 1);
  const double sign = (bits >> (kExp + kMant)) ? -1.0 : 1.0;
  if (exp == (1 << kExp) - 1) return mant ? NAN : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(mant, 1 - bias - kMant);
  return sign * std::ldexp(mant + (1 << kMant), exp - bias - kMant);
}

uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }

template <class T, int kExp, int kMant>
void check_widen_all() {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float got = static_cast<float>(T::from_bits(bits));
    const double want = reference_value<kExp, kMant>(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
      ASSERT_EQ(std::signbit(got), (b >> 15) != 0) << std::hex << b;
      // The payload moves to the top of float's mantissa.
      ASSERT_EQ(float_bits(got) & 0x7fffff, (b & ((1u << kMant) - 1)) << (23 - kMant))
          << std::hex << b;
    } else {
      // Bitwise, so that -0.0 and +0.0 are told apart.
      ASSERT_EQ(float_bits(got), float_bits(static_cast<float>(want))) << std::hex << b;
    }
  }
}

template <class T>
void check_round_trip_all() {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float f = static_cast<float>(T::from_bits(bits));
    ASSERT_EQ(T(f).bits, bits) << "from float, pattern 0x" << std::hex << b;
    if (!std::isnan(f)) {  // float -> double quiets signalling NaNs on x86; values are exact
      ASSERT_EQ(T(static_cast<double>(f)).bits, bits) << "from double, pattern 0x" << std::hex << b;
    }
  }
}

// For every pair of neighbouring positive values (a, b) of the format, including the
// largest finite value and the overflow bound, the exact midpoint must round to the one
// with an even mantissa, and anything just off the midpoint to the nearer one.
template <class T, int kExp, int kMant>
void check_rounding_all() {
  const uint16_t inf_bits = static_cast<uint16_t>(((1u << kExp) - 1) << kMant);
  for (uint16_t lo = 0; lo < inf_bits; ++lo) {
    const uint16_t hi = lo + 1;
    const double a = reference_value<kExp, kMant>(lo);
    // Past the largest finite value, the next "value" is 2^(max exponent + 1).
    const double b = hi == inf_bits ? 2 * a - reference_value<kExp, kMant>(lo - 1)
                                    : reference_value<kExp, kMant>(hi);
    const double mid = (a + b) / 2;  // exact: both are short binary fractions
    const uint16_t even = (lo & 1) ? hi : lo;
    for (double sign : {1.0, -1.0}) {
      const uint16_t s = sign < 0 ? 0x8000 : 0;
      ASSERT_EQ(T(sign * mid).bits, even | s) << "double midpoint after 0x" << std::hex << lo;
      ASSERT_EQ(T(static_cast<float>(sign * mid)).bits, even | s)
          << "float midpoint after 0x" << std::hex << lo;
      ASSERT_EQ(T(sign * std::nextafter(mid, 0.0)).bits, lo | s) << std::hex << lo;
      ASSERT_EQ(T(sign * std::nextafter(mid, INFINITY)).bits, hi | s) << std::hex << lo;
      const float below = std::nextafter(static_cast<float>(mid), 0.0f);
      const float above = std::nextafter(static_cast<float>(mid), INFINITY);
      ASSERT_EQ(T(sign * below).bits, lo | s) << std::hex << lo;
      ASSERT_EQ(T(sign * above).bits, hi | s) << std::hex << lo;
    }
  }
}

TEST(HalfTest, WidensEveryBitPatternExactly) { check_widen_all<Half, 5, 10>(); }
TEST(HalfTest, EveryBitPatternRoundTrips) { check_round_trip_all<Half>(); }
TEST(HalfTest, RoundsEveryMidpointToEven) { check_rounding_all<Half, 5, 10>(); }
TEST(BFloat16Test, WidensEveryBitPatternExactly) { check_widen_all<BFloat16, 8, 7>(); }
TEST(BFloat16Test, EveryBitPatternRoundTrips) { check_round_trip_all<BFloat16>(); }
TEST(BFloat16Test, RoundsEveryMidpointToEven) { check_rounding_all<BFloat16, 8, 7>(); }

TEST(HalfTest, LandmarkValues) {
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);   // largest finite
  EXPECT_EQ(Half(65519.99f).bits, 0x7bff);  // still rounds down
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);   // the midpoint to 2^16 ties to Inf
  EXPECT_EQ(Half(1e10f).bits, 0x7c00);      // overflow
  EXPECT_EQ(Half(-1e10).bits, 0xfc00);
  EXPECT_EQ(Half(std::ldexp(1.0f, -14)).bits, 0x0400);  // smallest normal
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(std::ldexp(1.0f, -25)).bits, 0x0000);  // tie between 0 and 2^-24: even
  EXPECT_EQ(Half(std::ldexp(1.5f, -25)).bits, 0x0001);
  EXPECT_EQ(Half(1e-30f).bits, 0x0000);
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_EQ(Half(-1e-30).bits, 0x8000);  // underflow keeps the sign
  EXPECT_EQ(Half(std::numeric_limits<float>::denorm_min()).bits, 0x0000);
  EXPECT_EQ(Half(2049.0f).bits, Half(2048.0f).bits);  // 2048 + 1 is not representable
  EXPECT_EQ(Half(INFINITY).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
}

TEST(HalfTest, DoubleIsRoundedOnceNotTwice) {
  // 1 + 2^-11 is the midpoint between the halves 1 and 1 + 2^-10. A double a hair above
  // it must round up; rounding it to float first would land exactly on the midpoint and
  // then tie down to 1. Narrowing straight from double avoids that.
  const double just_above = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(Half(just_above).bits, 0x3c01);
  EXPECT_EQ(Half(static_cast<float>(just_above)).bits, 0x3c00);
  const double bf_above = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(BFloat16(bf_above).bits, 0x3f81);
  EXPECT_EQ(BFloat16(static_cast<float>(bf_above)).bits, 0x3f80);
}

TEST(BFloat16Test, LandmarkValues) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(3.0e38f).bits, 0x7f62);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);  // rounds up to Inf
  EXPECT_EQ(BFloat16(1e39).bits, 0x7f80);                               // double beyond float
  EXPECT_EQ(BFloat16(-0.0f).bits, 0x8000);
  // Float subnormals are bfloat16 subnormals too: 2^-133 is the smallest.
  EXPECT_EQ(BFloat16(std::ldexp(1.0f, -133)).bits, 0x0001);
  EXPECT_EQ(BFloat16(std::ldexp(1.0f, -134)).bits, 0x0000);  // tie to even
  EXPECT_EQ(BFloat16(std::ldexp(1.0, -134) * 1.5).bits, 0x0001);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::denorm_min()).bits, 0x0000);
  EXPECT_EQ(BFloat16(257.0f).bits, BFloat16(256.0f).bits);  // 8 bits of precision
}

TEST(HalfTest, NaNKeepsSignAndPayloadTop) {
  // A float NaN whose payload lives only in the low bits still becomes a NaN (quiet bit
  // set), never Inf.
  const float low_payload = std::bit_cast<float>(0x7f800001u);
  EXPECT_EQ(Half(low_payload).bits, 0x7e00);
  EXPECT_EQ(BFloat16(low_payload).bits, 0x7fc0);
  const float neg_nan = std::bit_cast<float>(0xffc00000u);
  EXPECT_EQ(Half(neg_nan).bits, 0xfe00);
  EXPECT_EQ(BFloat16(neg_nan).bits, 0xffc0);
}

// ---------------------------------------------------------------- the bulk conversions
// detail::widen and detail::narrow must give, value for value, what the scalar conversions
// above give (checked there against the formats' definitions), at every offset and length.

/// Runs convert(src + offset, dst, n) for many (offset, n), n no multiple of any vector
/// width, and checks each dst[i] against scalar(src[offset + i]), and that dst[n] is untouched.
template <class From, class To, class Convert, class Scalar, class Bits>
void check_bulk(const std::vector<From>& src, Convert convert, Scalar scalar, Bits bits) {
  const size_t total = src.size();
  std::vector<std::pair<size_t, size_t>> runs = {{0, total}, {1, total - 1}, {3, total - 5}};
  for (size_t n = 0; n <= 40; ++n) runs.push_back({(7 * n) % 13, n});
  for (const auto& [offset, n] : runs) {
    std::vector<To> dst(n + 1);
    std::memset(static_cast<void*>(dst.data()), 0x5a, dst.size() * sizeof(To));
    const uint32_t sentinel = bits(dst[n]);
    convert(src.data() + offset, dst.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(bits(dst[i]), bits(scalar(src[offset + i])))
          << "offset " << offset << " n " << n << " i " << i << ": input bits 0x" << std::hex
          << bits(src[offset + i]);
    }
    ASSERT_EQ(bits(dst[n]), sentinel) << "wrote past n = " << n;
  }
}

uint32_t bits_of(float x) { return float_bits(x); }
uint32_t bits_of(Half x) { return x.bits; }
uint32_t bits_of(BFloat16 x) { return x.bits; }

template <class T>
void check_widen_bulk_all() {
  std::vector<T> all;
  for (uint32_t b = 0; b <= 0xffff; ++b) all.push_back(T::from_bits(static_cast<uint16_t>(b)));
  check_bulk<T, float>(
      all, [](const T* s, float* d, int64_t n) { tg::detail::widen(s, d, n); },
      [](T x) { return static_cast<float>(x); }, [](auto x) { return bits_of(x); });
}

/// Floats of every class that narrowing treats apart: ±0, float subnormals, every value of
/// the 16-bit format T, the midpoint to its neighbour and the floats on either side of it
/// (ties to even, the subnormals of T, the overflow bound), huge values and ±Inf, NaNs with
/// payloads high and low, quiet and signalling; and random bit patterns.
template <class T>
std::vector<float> narrowing_sample() {
  auto value = [](uint32_t b) { return static_cast<float>(T::from_bits(uint16_t(b))); };
  const uint32_t inf = T(INFINITY).bits;
  std::vector<float> v;
  for (uint32_t b = 0; b < inf; ++b) {
    // The distance to the next value up (exact in float); past the largest finite value,
    // to 2^(emax + 1), whose midpoint is the overflow bound.
    const float x = value(b), ulp = b + 1 < inf ? value(b + 1) - x : x - value(b - 1);
    const float mid = x + ulp / 2;
    for (float y : {x, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      v.push_back(y);
      v.push_back(-y);
    }
  }
  for (uint32_t b :
       {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00400000u, 0x7f800000u, 0xff800000u,
        0x7f7fffffu, 0xff7fffffu, 0x7f800001u, 0xff800001u, 0x7fc00000u, 0xffc00000u, 0x7f810000u,
        0x7fbfffffu, 0x7fffe000u, 0xffffffffu, 0x7f802000u, 0x7f801fffu, 0x7f8003ffu}) {
    v.push_back(std::bit_cast<float>(b));
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  v.push_back(1.0f);  // an odd total length
  if (v.size() % 2 == 0) v.push_back(-1.0f);
  return v;
}

template <class T>
void check_narrow_bulk() {
  check_bulk<float, T>(
      narrowing_sample<T>(), [](const float* s, T* d, int64_t n) { tg::detail::narrow(s, d, n); },
      [](float x) { return T(x); }, [](auto x) { return bits_of(x); });
}

TEST(HalfBulkTest, WidenMatchesTheScalarOnEveryBitPattern) { check_widen_bulk_all<Half>(); }
TEST(BFloat16BulkTest, WidenMatchesTheScalarOnEveryBitPattern) { check_widen_bulk_all<BFloat16>(); }
TEST(HalfBulkTest, NarrowMatchesTheScalarOnEverySpecialClass) { check_narrow_bulk<Half>(); }
TEST(BFloat16BulkTest, NarrowMatchesTheScalarOnEverySpecialClass) { check_narrow_bulk<BFloat16>(); }

}  // namespace
