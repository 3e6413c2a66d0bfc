// nn/fast/adam.cpp — Adam(W)'s fast update kernel: the same adam_element (nn/adam.h) on
// every element, so the result is bit-identical to the reference (vector sqrt, division and
// fma round exactly like the scalar ones); elements are independent, so threads split them
// into contiguous ranges. Two things make the loop vectorise: the shape of simd_for over
// __restrict arrays (core/simd.h), and -fno-math-errno for this file (nn/CMakeLists.txt) —
// std::sqrt must otherwise set errno for a negative argument, a branch that keeps every
// element scalar, and a scalar sqrt and division per element cost more than moving the
// element's 16 bytes through the caches.
#include "nn/adam.h"
#include "core/parallel.h"
#include "core/simd.h"

namespace tg::nn {
namespace {

using tg::detail::ComputeType;

template <bool kCoupled, class T>
[[gnu::noinline]] void adam_span(T* __restrict p, const T* __restrict g, T* __restrict m,
                                 T* __restrict v, int64_t n,
                                 const detail::AdamConstants<ComputeType<T>> k) {
  // k by value: a local copy the stores to p, m, v cannot alias, so its loads leave the loop.
  tg::detail::simd_for(n, [&](int64_t i) { detail::adam_element<kCoupled>(p, g, m, v, i, k); });
}

template <class T>
void adam_update(T* p, const T* g, T* m, T* v, int64_t n, const detail::AdamStep& s) {
  const detail::AdamConstants<ComputeType<T>> k(s);
  parallel_rows(n, 5, [&](int64_t begin, int64_t end) {
    if (k.coupled) adam_span<true>(p + begin, g + begin, m + begin, v + begin, end - begin, k);
    else adam_span<false>(p + begin, g + begin, m + begin, v + begin, end - begin, k);
  });
}

}  // namespace

namespace detail {

bool install_fast_kernels() {
  kernels::adam_update.set_fast(adam_update<float>, adam_update<double>, adam_update<Half>,
                                adam_update<BFloat16>);
  return true;
}

}  // namespace detail
}  // namespace tg::nn
