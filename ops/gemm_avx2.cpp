// ops/gemm_avx2.cpp — the AVX2 micro-kernels (see ops/gemm_kernels.h).
//
// Compiled with -mavx2 -mfma (ops/CMakeLists.txt) whatever the rest of the build targets;
// gemm.cpp calls these only on a CPU that reports AVX2 and FMA. Keep this file free of
// standard-library code: an inline function instantiated here would carry AVX2
// instructions and the linker might pick this copy for the whole program.
#include "ops/gemm_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace tg::detail {
namespace {

struct F32 {
  using T = float;
  using V = __m256;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const T* p) { return _mm256_load_ps(p); }
  static V loadu(const T* p) { return _mm256_loadu_ps(p); }
  static void storeu(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V broadcast(T x) { return _mm256_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
};

struct F64 {
  using T = double;
  using V = __m256d;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const T* p) { return _mm256_load_pd(p); }
  static V loadu(const T* p) { return _mm256_loadu_pd(p); }
  static void storeu(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V broadcast(T x) { return _mm256_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
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

void gemm_micro_avx2_f32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                         float alpha, float beta) {
  micro<F32, kAvx2MrF32>(kc, a, b, c, ldc, alpha, beta);
}

void gemm_micro_avx2_f64(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                         double alpha, double beta) {
  micro<F64, kAvx2MrF64>(kc, a, b, c, ldc, alpha, beta);
}

}  // namespace tg::detail
#endif
