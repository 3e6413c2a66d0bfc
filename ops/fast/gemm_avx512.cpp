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

}  // namespace
}  // namespace tg::detail

#include "ops/fast/gemm_micro.h"

namespace tg::detail {
namespace {

// GCC 12 warns inside its own unpack intrinsics (they start from an "undefined" register);
// every value here is initialised. (Clang has no such warning, and would warn of the pragma.)
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// Transposes a 16 x 16 block held in 16 registers (row i in r[i]) in four rounds of
/// shuffles. After round 2, u[4g + c] holds, in its 128-bit lane L, column 4L + c of the four
/// rows of group g (rows 4g .. 4g + 3); rounds 3 and 4 gather the four groups' lanes.
inline __attribute__((always_inline)) void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {  // pairs of rows interleaved: (r0[0] r1[0] r0[1] r1[1] | ...)
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 4; ++g) {  // four rows together: one column of them per 128-bit lane
    const __m512d t0 = _mm512_castps_pd(t[4 * g]), t1 = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * g + 2]), t3 = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  for (int c = 0; c < 4; ++c) {  // lanes (0, 2) and (1, 3) of groups 0+1 and 2+3, then merged
    const __m512 x02 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
    const __m512 x13 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    const __m512 y02 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    const __m512 y13 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(x02, y02, 0x88);       // column c
    r[8 + c] = _mm512_shuffle_f32x4(x02, y02, 0xDD);   // column 8 + c
    r[4 + c] = _mm512_shuffle_f32x4(x13, y13, 0x88);   // column 4 + c
    r[12 + c] = _mm512_shuffle_f32x4(x13, y13, 0xDD);  // column 12 + c
  }
}

}  // namespace

void gemm_pack_transposed_avx512_f32(const float* src, int64_t ld, int64_t kc, int w, int width,
                                     float* dst) {
  int64_t p0 = 0;
  for (; p0 + 16 <= kc; p0 += 16) {
    for (int j0 = 0; j0 < width; j0 += 16) {
      const int rows = w - j0 < 16 ? w - j0 : 16;  // rows to read (<= 0: all padding)
      const int keep = width - j0 < 16 ? width - j0 : 16;
      __m512 r[16];
      for (int i = 0; i < 16; ++i) {
        r[i] = i < rows ? _mm512_loadu_ps(src + (j0 + i) * ld + p0) : _mm512_setzero_ps();
      }
      transpose16(r);
      const auto mask = static_cast<__mmask16>((1u << keep) - 1u);
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
