// ops/fast/gemm_avx512.cpp — the AVX-512 micro-kernels (see ops/fast/gemm_kernels.h).
//
// Compiled with -mavx512f (ops/CMakeLists.txt) whatever the rest of the build targets;
// gemm.cpp calls these only on a CPU that reports AVX-512F. Keep this file free of
// standard-library code: an inline function instantiated here would carry AVX-512
// instructions and the linker might pick this copy for the whole program.
#include "ops/fast/gemm_kernels.h"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

namespace tg::detail {
namespace {

struct F32 {
  using T = float;
  using P = T;
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
  using P = T;
  using V = __m512d;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_load_pd(p); }
  static V loadu(const T* p) { return _mm512_loadu_pd(p); }
  static void storeu(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V broadcast(T x) { return _mm512_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
};

}  // namespace
}  // namespace tg::detail

#include "ops/fast/gemm_avx512_transpose.h"
#include "ops/fast/gemm_micro.h"

namespace tg::detail {

void gemm_pack_transposed_avx512_f32(const float* src, int64_t ld, int64_t kc, int w, int width,
                                     float* dst) {
  int64_t p0 = 0;
  for (; p0 + 16 <= kc; p0 += 16) {
    for (int j0 = 0; j0 < width; j0 += 16) {
      const int rows = w - j0 < 16 ? w - j0 : 16;  // rows to read (<= 0: all padding)
      const int keep = width - j0 < 16 ? width - j0 : 16;
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        r[i] = i < rows ? _mm512_loadu_ps(src + (j0 + i) * ld + p0) : _mm512_setzero_ps();
      }
      transpose16(r);
      const auto mask = static_cast<__mmask16>((1u << keep) - 1u);
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) _mm512_mask_storeu_ps(dst + (p0 + q) * width + j0, mask, r[q]);
    }
  }
  for (; p0 < kc; ++p0) {  // the last kc % 16 columns, one value at a time
    for (int j = 0; j < width; ++j) dst[p0 * width + j] = j < w ? src[j * ld + p0] : 0.0f;
  }
}

void gemm_pack_rows_avx512_f32(const float* src, int64_t ld, int64_t kc, int w, int width,
                               float* dst) {
  // A lane past w is never read (a masked-off lane of a load cannot fault) and is stored
  // as 0; a lane past width is never stored.
  auto mask = [](int n) {
    return static_cast<__mmask16>(n <= 0 ? 0u : n >= 16 ? 0xffffu : (1u << n) - 1u);
  };
  const __mmask16 read_lo = mask(w), read_hi = mask(w - 16);
  const __mmask16 write_lo = mask(width), write_hi = mask(width - 16);
  for (int64_t p = 0; p < kc; ++p, src += ld, dst += width) {
    _mm512_mask_storeu_ps(dst, write_lo, _mm512_maskz_loadu_ps(read_lo, src));
    if (width > 16) {
      _mm512_mask_storeu_ps(dst + 16, write_hi, _mm512_maskz_loadu_ps(read_hi, src + 16));
    }
  }
}

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
