// ops/fast/gemm_avx2.cpp — the AVX2 micro-kernels (see ops/fast/gemm_kernels.h).
//
// Compiled with -mavx2 -mfma (ops/CMakeLists.txt) whatever the rest of the build targets;
// gemm.cpp calls these only on a CPU that reports AVX2 and FMA. Keep this file free of
// standard-library code: an inline function instantiated here would carry AVX2
// instructions and the linker might pick this copy for the whole program.
#include "ops/fast/gemm_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace tg::detail {
namespace {

struct F32 {
  using T = float;
  using P = T;
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
  using P = T;
  using V = __m256d;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const T* p) { return _mm256_load_pd(p); }
  static V loadu(const T* p) { return _mm256_loadu_pd(p); }
  static void storeu(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V broadcast(T x) { return _mm256_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
};

}  // namespace
}  // namespace tg::detail

#include "ops/fast/gemm_micro.h"

namespace tg::detail {

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
