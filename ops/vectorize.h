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
//   - call fast_exp (ops/vector_math.h) instead of std::exp, which GCC cannot vectorise.
// Everything here is plain C++: without -march=native (the sanitize preset) it still runs,
// only narrower.
#pragma once

#include <cstdint>

#include "ops/vector_math.h"

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

/// sigmoid(v) = 1 / (1 + e^-v), computed like detail::sigmoid_value (ops/activation.h) from
/// e^-|v|, which never overflows, but with fast_exp (ops/vector_math.h) so that loops over it
/// vectorise:
///   v >= 0:  1 / (1 + e^-v);   v < 0:  e^v / (1 + e^v)   (the same value, multiplied by e^v)
template <class F>
inline F sigmoid_vectorizable(F v) {
  const F e = fast_exp(v >= F(0) ? -v : v);
  return (v >= F(0) ? F(1) : e) / (F(1) + e);
}

}  // namespace tg::detail
