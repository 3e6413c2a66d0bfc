// core/simd.h — loop shapes that the compiler turns into vector (SIMD) instructions, and an
// exp that vectorises. The one header for this: the fast kernels (ops/fast/), the flat loops
// of the elementwise ops and the gradient sums of the engine use it; the reference kernels
// never need it.
//
// Why shapes at all. At -O2 GCC vectorises a loop only when the vector code replaces ALL of
// the scalar code (its "very cheap" cost model): a loop over an unknown count n, which would
// need a scalar remainder loop, or over pointers that might overlap, stays scalar. So:
//   - simd_for walks n elements in blocks of kLanes with a constant trip count inside each
//     block, then the last n % kLanes elements one by one;
//   - lane_sum keeps kLanes partial sums: a plain `s += t[i]` is one chain of dependent
//     additions that may not be reordered (floating-point addition is not associative), so it
//     cannot use vector lanes;
//   - the loops take their arrays as `T* __restrict` parameters of a function that is not
//     inlined: __restrict promises the arrays do not overlap, and GCC forgets that promise
//     when it inlines the function into its caller;
//   - fast_exp below is exp written with + * and bit operations only; std::exp is a library
//     call, one element at a time.
// Partial sums change the order of a sum, not the math: a sum over kLanes lanes differs from
// the left-to-right sum by a few ulp relative to the sum of |terms|. The order depends on n
// alone, so a result never depends on the thread count.
//
// fast_exp. The classic range reduction: write x = k * ln2 + r with k = round(x / ln2), an
// integer, and |r| <= ln2 / 2 ~ 0.347. Then
//   exp(x) = 2^k * exp(r)
// 2^k is exact: an integer k becomes the exponent field of a float by a shift. exp(r) on the
// small interval is its Taylor series, cut where the next term is below half an ulp:
//   float:  degree 7,  0.347^8  / 8!  ~ 5e-9   (float  ulp at 1: 1.2e-7)
//   double: degree 13, 0.347^14 / 14! ~ 4e-18  (double ulp at 1: 2.2e-16)
// evaluated by Horner's rule. ln2 is split into a "hi" part with trailing zero bits, so that
// k * ln2_hi is exact for every k in range, and a tiny "lo" correction (Cody and Waite):
// r = (x - k * ln2_hi) - k * ln2_lo keeps r accurate even when x is large.
// The result is within a couple of ulp of std::exp (tests/core/simd_test.cpp measures it),
// including the ends of the range: x is clamped to where the result is 0 (below the smallest
// subnormal) or inf (above the largest finite), and 2^k is applied as 2^(k/2) * 2^(k - k/2)
// so that neither half leaves the normal exponent range even when 2^k itself would. NaN
// gives NaN.
//
// Nothing here needs -ffast-math or intrinsics: in a portable build (the sanitize preset)
// the same code runs, only narrower or unvectorised, with the same results.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace tg::detail {

/// Elements per block of every vectorised loop: one 64-byte (AVX-512) register of float, two
/// of double; two or four 32-byte (AVX2) registers.
inline constexpr int64_t kLanes = 16;

/// Calls body(i) for every i in [0, n), in increasing order: in whole blocks of kLanes (which
/// GCC vectorises), then the remainder one by one.
template <class Body>
inline void simd_for(int64_t n, Body&& body) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) body(i + k);
  }
  for (; i < n; ++i) body(i);
}

/// sum over i in [0, n) of term(i), in kLanes partial sums: partial k adds the terms with
/// i % kLanes == k, in increasing i; then the partials are folded pairwise (k + 8, k + 4, ...).
template <class F, class Term>
inline F lane_sum(int64_t n, Term&& term) {
  F partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) partial[k] += term(i + k);
  }
  for (int64_t k = 0; i + k < n; ++k) partial[k] += term(i + k);
  for (int64_t half = kLanes / 2; half > 0; half /= 2) {
    for (int64_t k = 0; k < half; ++k) partial[k] += partial[k + half];
  }
  return partial[0];
}

/// Constants of exp's range reduction and the Taylor coefficients 1/n!, per type.
template <class F>
struct ExpConstants;

template <>
struct ExpConstants<float> {
  using UInt = uint32_t;
  static constexpr int kMantissaBits = 23, kBias = 127;
  static constexpr float kLo = -104.0f, kHi = 89.0f;  // exp(-104) < 2^-150, exp(89) > FLT_MAX
  static constexpr float kLog2e = 1.44269504088896341f;
  static constexpr float kLn2Hi = 0.693359375f;     // 355 / 512: ln2 to 9 bits (Cephes)
  static constexpr float kLn2Lo = -2.12194440e-4f;  // ln2 - kLn2Hi
  static constexpr int kDegree = 7;
  static constexpr float kInvFactorial[kDegree + 1] = {
      1.0f, 1.0f, 1.0f / 2, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720, 1.0f / 5040};
};

template <>
struct ExpConstants<double> {
  using UInt = uint64_t;
  static constexpr int kMantissaBits = 52, kBias = 1023;
  static constexpr double kLo = -746.0, kHi = 710.0;  // exp(-746) < 2^-1075, exp(710) > DBL_MAX
  static constexpr double kLog2e = 1.4426950408889634074;
  static constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln2, low 32 bits cleared
  static constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln2 - kLn2Hi
  static constexpr int kDegree = 13;
  static constexpr double kInvFactorial[kDegree + 1] = {1.0,
                                                        1.0,
                                                        1.0 / 2,
                                                        1.0 / 6,
                                                        1.0 / 24,
                                                        1.0 / 120,
                                                        1.0 / 720,
                                                        1.0 / 5040,
                                                        1.0 / 40320,
                                                        1.0 / 362880,
                                                        1.0 / 3628800,
                                                        1.0 / 39916800,
                                                        1.0 / 479001600,
                                                        1.0 / 6227020800.0};
};

/// 2^k as a float/double, for k in the normal exponent range: the bits (k + bias) << mantissa.
/// (Unsigned arithmetic: for a NaN x, k is garbage, which must wrap, not overflow.)
template <class F>
inline F pow2_int(typename ExpConstants<F>::UInt k) {
  using C = ExpConstants<F>;
  using UInt = typename C::UInt;
  return std::bit_cast<F>(static_cast<UInt>((k + UInt(C::kBias)) << C::kMantissaBits));
}

/// exp(x) for float or double, vectorisable; a few ulp from std::exp (see the file comment).
template <class F>
[[gnu::always_inline]] inline F fast_exp(F x) {  // inlined, or the loop calling it is scalar
  using C = ExpConstants<F>;
  using UInt = typename C::UInt;
  // Clamp to the range where the result changes; a NaN passes both tests and stays NaN
  // all the way to the result (NaN * anything).
  F xc = x < C::kLo ? C::kLo : x;
  xc = xc > C::kHi ? C::kHi : xc;
  // k = round(x / ln2) by the "shifter" trick: adding 1.5 * 2^mantissa pushes the fraction
  // bits out (rounding to nearest), so the integer k sits in the low bits of the sum and can
  // be read from them; subtracting the shifter again gives k as a float.
  const F shifter = F(1.5) * static_cast<F>(UInt(1) << C::kMantissaBits);
  const F shifted = xc * C::kLog2e + shifter;
  const UInt k = std::bit_cast<UInt>(shifted) - std::bit_cast<UInt>(shifter);
  const F kf = shifted - shifter;
  const F r = (xc - kf * C::kLn2Hi) - kf * C::kLn2Lo;
  F p = C::kInvFactorial[C::kDegree];
#pragma GCC \
    unroll 16  // unrolled, the loop calling fast_exp has no inner loop to stop its vectoriser
  for (int i = C::kDegree - 1; i >= 0; --i) p = p * r + C::kInvFactorial[i];
  // 2^k = 2^k1 * 2^(k - k1) with k1 = k / 2 (rounded towards -inf by the arithmetic shift):
  // each half stays inside the normal exponent range.
  const UInt k1 = static_cast<UInt>(static_cast<std::make_signed_t<UInt>>(k) >> 1);
  return p * pow2_int<F>(k1) * pow2_int<F>(k - k1);
}

/// sigmoid(v) = 1 / (1 + e^-v) from e^-|v|, which never overflows, with fast_exp:
///   v >= 0:  1 / (1 + e^-v);   v < 0:  e^v / (1 + e^v)   (the same value, multiplied by e^v)
template <class F>
inline F fast_sigmoid(F v) {
  const F e = fast_exp(v >= F(0) ? -v : v);
  return (v >= F(0) ? F(1) : e) / (F(1) + e);
}

/// Marks a function whose loops should use 64-byte (AVX-512) vectors where the CPU has them.
/// GCC's tuning for recent Intel CPUs prefers 32-byte vectors even with AVX-512 available;
/// for exp-heavy loops the wider ones are ~1.5x faster (measured). Only a tuning hint:
/// without AVX-512 (or in a portable build) the same loops use whatever vectors exist. Such
/// a function is never inlined: inside a caller without the hint, its loops would follow
/// the caller's preference (one call per row costs nothing next to the row's work).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TG_WIDE_VECTORS __attribute__((target("prefer-vector-width=512"), noinline))
#else
#define TG_WIDE_VECTORS
#endif

// The row loops below are written out rather than built on lane_sum: each is
// a TG_WIDE_VECTORS function, and GCC does not inline a helper into a function with other
// target options, so the helper's loop would run at the default vector width.

/// max over x[0, n) (-inf for n = 0); a NaN never wins.
template <class F>
TG_WIDE_VECTORS F row_max(const F* __restrict x, int64_t n) {
  F lane[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) lane[j] = -std::numeric_limits<F>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) lane[j] = lane[j] < x[i + j] ? x[i + j] : lane[j];
  }
  F m = -std::numeric_limits<F>::infinity();
  for (int64_t j = 0; j < kLanes; ++j) m = std::max(m, lane[j]);
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

/// sum over x[0, n), in lanes.
template <class F>
TG_WIDE_VECTORS F row_sum(const F* __restrict x, int64_t n) {
  F lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) lane[j] += x[i + j];
  }
  F s = 0;
  for (int64_t j = 0; j < kLanes; ++j) s += lane[j];
  for (; i < n; ++i) s += x[i];
  return s;
}

/// sum over x[0, n) of exp(x - shift), in lanes.
template <class F>
TG_WIDE_VECTORS F row_sum_exp(const F* __restrict x, int64_t n, F shift) {
  F lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) lane[j] += fast_exp(x[i + j] - shift);
  }
  F s = 0;
  for (int64_t j = 0; j < kLanes; ++j) s += lane[j];
  for (; i < n; ++i) s += fast_exp(x[i] - shift);
  return s;
}

/// d[i] += s[i] for i in [0, n).
template <class F>
TG_WIDE_VECTORS void row_add(F* __restrict d, const F* __restrict s, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) d[i + j] += s[i + j];
  }
  for (; i < n; ++i) d[i] += s[i];
}

/// d[i] = v for i in [0, n).
template <class F>
TG_WIDE_VECTORS void row_fill(F* __restrict d, int64_t n, F v) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) d[i + j] = v;
  }
  for (; i < n; ++i) d[i] = v;
}

}  // namespace tg::detail
