// ops/gemm_avx512.cpp — the AVX-512 micro-kernels (see ops/gemm_kernels.h).
//
// Compiled with -mavx512f (ops/CMakeLists.txt) whatever the rest of the build targets;
// gemm.cpp calls these only on a CPU that reports AVX-512F. Keep this file free of
// standard-library code: an inline function instantiated here would carry AVX-512
// instructions and the linker might pick this copy for the whole program.
#include "ops/gemm_kernels.h"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

namespace tg::detail {
namespace {

struct F32 {
  using T = float;
  using V = __m512;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const T* p) { return _mm512_load_ps(p); }
  static V loadu(const T* p) { return _mm512_loadu_ps(p); }
  static void storeu(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V broadcast(T x) { return _mm512_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
};

struct F64 {
  using T = double;
  using V = __m512d;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_load_pd(p); }
  static V loadu(const T* p) { return _mm512_loadu_pd(p); }
  static void storeu(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V broadcast(T x) { return _mm512_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
};

/// MR rows x two vectors of accumulators; each step of p loads one row of the B panel (two
/// vectors), broadcasts each of the MR values of the A column, and does 2*MR FMAs.
template <class S, int MR>
inline __attribute__((always_inline)) void micro(int64_t kc, const typename S::T* a,
                                                 const typename S::T* b, typename S::T* c,
                                                 int64_t ldc, typename S::T alpha,
                                                 typename S::T beta) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(T));
  // Ask for the C tile now, so that it is in L1 when the sum is done.
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    __builtin_prefetch(c + i * ldc, 1, 3);
    __builtin_prefetch(c + i * ldc + 2 * kLanes - 1, 1, 3);
  }
  V acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = S::zero();
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p) {
    const V b0 = S::load(b), b1 = S::load(b + kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V ai = S::broadcast(a[i]);
      acc[i][0] = S::fma(ai, b0, acc[i][0]);
      acc[i][1] = S::fma(ai, b1, acc[i][1]);
    }
    a += MR;
    b += 2 * kLanes;
  }
  const V va = S::broadcast(alpha);
  if (beta == T(0)) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      S::storeu(c + i * ldc, S::mul(va, acc[i][0]));
      S::storeu(c + i * ldc + kLanes, S::mul(va, acc[i][1]));
    }
  } else {
    const V vb = S::broadcast(beta);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      T* row = c + i * ldc;
      S::storeu(row, S::fma(vb, S::loadu(row), S::mul(va, acc[i][0])));
      S::storeu(row + kLanes, S::fma(vb, S::loadu(row + kLanes), S::mul(va, acc[i][1])));
    }
  }
}

}  // namespace

void gemm_micro_avx512_f32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                           float alpha, float beta) {
  micro<F32, kAvx512MrF32>(kc, a, b, c, ldc, alpha, beta);
}

void gemm_micro_avx512_f64(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                           double alpha, double beta) {
  micro<F64, kAvx512MrF64>(kc, a, b, c, ldc, alpha, beta);
}

}  // namespace tg::detail
#endif
