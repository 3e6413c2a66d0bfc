// ops/vectorize.h — loop shapes that GCC turns into vector instructions at -O2, for the fast
// kernels (the plain reference kernels never need them).
//
// Why shapes at all: at -O2 GCC only vectorises a loop when the vector code replaces the
// scalar code entirely (its "very cheap" cost model): a loop over an unknown count n, which
// would need a scalar remainder loop, or over pointers that might overlap, stays scalar.
// So the fast kernels
//   - walk n elements in groups of kGroup with a constant trip count inside each group
//     (simd_for), the last n % kGroup elements one by one;
//   - take their arrays as `T* __restrict` parameters of a function that is not inlined:
//     __restrict promises the arrays do not overlap, and GCC forgets that promise when it
//     inlines the function into its caller;
//   - sum with kGroup independent partial sums (group_sum): a plain `s += t[i]` is one chain
//     of dependent additions that may not be reordered (floating-point addition is not
//     associative), so it cannot use vector lanes.
//   - call exp_nonpositive instead of std::exp, which GCC cannot vectorise (a library call).
// Everything here is plain C++: without -march=native (the sanitize preset) it still runs,
// only narrower.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace tg::detail {

/// Elements per group: two 256-bit registers of float, four of double.
inline constexpr int64_t kGroup = 16;

/// Calls body(i) for every i in [0, n), in increasing order: in whole groups of kGroup (which
/// GCC vectorises), then the remainder one by one.
template <class Body>
inline void simd_for(int64_t n, Body&& body) {
  int64_t i = 0;
  for (; i + kGroup <= n; i += kGroup) {
    for (int64_t k = 0; k < kGroup; ++k) body(i + k);
  }
  for (; i < n; ++i) body(i);
}

/// sum over i in [0, n) of term(i), in kGroup partial sums: partial k adds the terms with
/// i % kGroup == k, in increasing i; then the partials are folded pairwise (k + 8, k + 4, ...).
/// The order depends on n alone, so the result is the same on every run and every thread
/// count; it differs from a left-to-right sum by rounding only.
template <class F, class Term>
inline F group_sum(int64_t n, Term&& term) {
  F partial[kGroup] = {};
  int64_t i = 0;
  for (; i + kGroup <= n; i += kGroup) {
    for (int64_t k = 0; k < kGroup; ++k) partial[k] += term(i + k);
  }
  for (int64_t k = 0; i + k < n; ++k) partial[k] += term(i + k);
  for (int64_t half = kGroup / 2; half > 0; half /= 2) {
    for (int64_t k = 0; k < half; ++k) partial[k] += partial[k + half];
  }
  return partial[0];
}

/// 1 / k!, in double, rounded once to F.
template <class F>
constexpr F inverse_factorial(int k) {
  double factorial = 1;
  for (int i = 2; i <= k; ++i) factorial *= i;
  return static_cast<F>(1 / factorial);
}

/// 1/K! + r/(K+1)! + ... + r^(N-K)/N!, by Horner's rule (the recursion unrolls at compile time).
template <class F, int K, int N>
inline F taylor_tail(F r) {
  if constexpr (K == N) {
    return inverse_factorial<F>(N);
  } else {
    return inverse_factorial<F>(K) + r * taylor_tail<F, K + 1, N>(r);
  }
}

/// e^x for x <= 0, without library calls so that GCC can vectorise it (std::exp is an
/// opaque function to it). F is float or double.
///
///   e^x = 2^n * e^r   with n = round(x / ln 2) and r = x - n ln 2, |r| <= ln(2) / 2
///
/// 2^n is built directly in the exponent bits of F; e^r is its Taylor series, to r^7 for
/// float and r^13 for double: the first term left out is at most (ln(2)/2)^8 / 8! = 5e-9
/// (float, whose rounding unit is 6e-8) and (ln(2)/2)^14 / 14! = 4e-18 (double, 1.1e-16), so
/// the result is within a few rounding units of e^x. ln 2 is split into a part with few
/// significant bits (so that n * kLn2Hi is exact) and the rest, so r keeps its accuracy.
/// Below about the smallest normal number (x < -87.33 for float, -708.39 for double) the result is
/// 0; nan stays nan.
template <class F>
inline F exp_nonpositive(F x) {
  static_assert(std::is_same_v<F, float> || std::is_same_v<F, double>);
  constexpr bool kFloat = std::is_same_v<F, float>;
  using Bits = std::conditional_t<kFloat, int32_t, int64_t>;
  constexpr F kLowest = kFloat ? F(-87.33) : F(-708.39);
  constexpr int kMantissaBits = kFloat ? 23 : 52;
  constexpr Bits kBias = kFloat ? 127 : 1023;
  constexpr F kLog2e = F(1.4426950408889634);
  constexpr F kLn2Hi = kFloat ? F(0.693145751953125) : F(0.6931471803691238);
  constexpr F kLn2Lo = kFloat ? F(1.428606765330187e-06) : F(1.9082149292705877e-10);
  // Adding then subtracting 1.5 * 2^mantissa_bits rounds to the nearest whole number.
  constexpr F kRound = F(1.5) * static_cast<F>(Bits(1) << kMantissaBits);
  constexpr int kTerms = kFloat ? 7 : 13;

  const F xc = x >= kLowest ? x : kLowest;  // nan too: the conversion below must see a number
  const F n = (xc * kLog2e + kRound) - kRound;
  const F r = (xc - n * kLn2Hi) - n * kLn2Lo;
  const F e_r = taylor_tail<F, 0, kTerms>(r);
  const F two_n =
      std::bit_cast<F>(static_cast<Bits>((static_cast<Bits>(n) + kBias) << kMantissaBits));
  const F e = e_r * two_n;
  return x >= kLowest ? e : (x < kLowest ? F(0) : x);
}

/// sigmoid(v) = 1 / (1 + e^-v), computed like detail::sigmoid_value (ops/activation.h) from
/// e^-|v|, which never overflows, but with exp_nonpositive so that loops over it vectorise:
///   v >= 0:  1 / (1 + e^-v);   v < 0:  e^v / (1 + e^v)   (the same value, multiplied by e^v)
template <class F>
inline F sigmoid_vectorizable(F v) {
  const F e = exp_nonpositive(v >= F(0) ? -v : v);
  return (v >= F(0) ? F(1) : e) / (F(1) + e);
}

}  // namespace tg::detail
