// ops/fast/gemm_avx512_transpose.h — internal to the AVX-512 files of the GEMM: a 16 x 16
// transpose of 32-bit values held in registers, for the packings of panels whose rows are
// contiguous (ops/fast/gemm_avx512.cpp moves floats with it, ops/fast/gemm_avx512_bf16.cpp
// pairs of bfloat16). Shuffles only move bits, so the values may be of any 32-bit type.
//
// Include it only in a file compiled with AVX-512 enabled; like ops/fast/gemm_micro.h, it
// sits in an anonymous namespace so that each such file gets its own copy.
#pragma once

#include <immintrin.h>

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
///
/// Every loop is unrolled, here and in the packings around it: a loop GCC keeps rolled
/// indexes the arrays, so they live on the stack and each round stores its 16 registers there
/// and loads them back (the packings ran at a third of their speed).
inline __attribute__((always_inline)) void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 16
  for (int i = 0; i < 8; ++i) {  // pairs of rows interleaved: (r0[0] r1[0] r0[1] r1[1] | ...)
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 16
  for (int g = 0; g < 4; ++g) {  // four rows together: one column of them per 128-bit lane
    const __m512d t0 = _mm512_castps_pd(t[4 * g]), t1 = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * g + 2]), t3 = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
#pragma GCC unroll 16
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
}  // namespace tg::detail
