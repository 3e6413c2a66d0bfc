// ops/fast/gemm_avx512_bf16.cpp — the bfloat16 micro-kernel on vdpbf16ps, and its packings
// (see ops/fast/gemm_kernels.h).
//
// vdpbf16ps (_mm512_dpbf16_ps(acc, x, y)) reads 32 bfloat16 from each of x and y as 16
// pairs, and adds each pair's dot product into one float lane:
//
//   acc[l] += x[2l] * y[2l] + x[2l + 1] * y[2l + 1]          (l < 16)
//
// The float kernel's step "broadcast A(i, p), multiply a row of the B panel, add" takes two
// values of p at once if the pairs run along k. So a row of a packed B panel holds, for each
// column j, the word (B(p, j), B(p + 1, j)), and the broadcast word is (A(i, p), A(i, p + 1)):
// lane j then gets A(i, p) B(p, j) + A(i, p + 1) B(p + 1, j). One instruction does 32
// multiply-adds where vfmadd231ps does 16, on half the bytes of panel per multiply-add.
// The tile, the blocking and the epilogue (alpha, beta) are the float kernel's
// (ops/fast/gemm_micro.h), with float accumulators.
//
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512bf16 (ops/CMakeLists.txt) whatever
// the rest of the build targets; gemm.cpp calls it only on a CPU that reports all four. Keep
// this file free of standard-library code (see ops/fast/gemm_avx512.cpp), and of BFloat16's
// inline conversions too: it reads .bits only.
#include "ops/fast/gemm_kernels.h"

#if defined(__x86_64__) && defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>

#include <bit>

namespace tg::detail {
namespace {

struct Bf16Pairs {
  using T = float;     // C, alpha, beta and the accumulators
  using P = uint32_t;  // one packed word: (X(p, j), X(p + 1, j))
  using V = __m512;
  static V zero() { return _mm512_setzero_ps(); }
  // std::bit_cast, not a C cast: clang reads (__m512bh)v as a conversion of the values
  // (each 64-bit lane converted to bfloat16: zeros here), GCC as a reinterpretation.
  static __m512bh load(const P* p) { return std::bit_cast<__m512bh>(_mm512_load_si512(p)); }
  static __m512bh broadcast(P x) {
    __m512i word = _mm512_set1_epi32(static_cast<int>(x));
#if defined(__clang__) && __clang_major__ < 18
    // clang 16 and 17 crash (a segfault, at -O1 and above) when they fold a broadcast into
    // vdpbf16ps's memory operand (LLVM issue 68117, fixed in 18): an empty asm statement that
    // "changes" the register hides where it came from. One vpbroadcastd more per step.
    __asm__("" : "+v"(word));
#endif
    return std::bit_cast<__m512bh>(word);
  }
  static V fma(__m512bh a, __m512bh b, V acc) { return _mm512_dpbf16_ps(acc, a, b); }
  // the epilogue, on floats
  static V loadu(const T* p) { return _mm512_loadu_ps(p); }
  static void storeu(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V broadcast(T x) { return _mm512_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
};

}  // namespace
}  // namespace tg::detail

#include "ops/fast/gemm_avx512_transpose.h"
#include "ops/fast/gemm_micro.h"

namespace tg::detail {
namespace {

/// The word (x[0], x[1]), or (x[0], 0) when x[1] lies past the end of k.
inline uint32_t pair(const BFloat16* x, bool second) {
  return x[0].bits | (second ? static_cast<uint32_t>(x[1].bits) << 16 : 0u);
}

/// The first n of 16 lanes (n <= 0: none).
inline __mmask16 first_lanes(int n) {
  return static_cast<__mmask16>(n <= 0 ? 0u : n >= 16 ? 0xffffu : (1u << n) - 1u);
}

}  // namespace

void gemm_pack_pairs_transposed_avx512_bf16(const BFloat16* src, int64_t ld, int64_t kc, int w,
                                            int width, uint32_t* dst) {
  // Column j of the panel is the contiguous run src[j * ld ...]: read as 32-bit words it is
  // already a run of pairs, so this is the float packing's transpose, moving words.
  const int64_t rows = (kc + 1) / 2;
  int64_t q0 = 0;
  for (; 2 * (q0 + 16) <= kc; q0 += 16) {
    for (int j0 = 0; j0 < width; j0 += 16) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        r[i] = i < w - j0 ? _mm512_loadu_ps(src + (j0 + i) * ld + 2 * q0) : _mm512_setzero_ps();
      }
      transpose16(r);
      const __mmask16 keep = first_lanes(width - j0);
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) _mm512_mask_storeu_ps(dst + (q0 + q) * width + j0, keep, r[q]);
    }
  }
  for (int64_t q = q0; q < rows; ++q) {  // the last pairs, one word at a time
    for (int j = 0; j < width; ++j) {
      dst[q * width + j] = j < w ? pair(src + j * ld + 2 * q, 2 * q + 1 < kc) : 0u;
    }
  }
}

void gemm_pack_pairs_rows_avx512_bf16(const BFloat16* src, int64_t ld, int64_t kc, int w, int width,
                                      uint32_t* dst) {
  // Rows p and p + 1 of the panel are contiguous runs: widen each value to 32 bits and put
  // row p + 1's above row p's. A lane past w is never read and is stored as 0.
  const int64_t rows = (kc + 1) / 2;
  for (int64_t q = 0; q < rows; ++q, dst += width) {
    const BFloat16* lo_row = src + 2 * q * ld;
    const bool has_hi = 2 * q + 1 < kc;
    for (int j0 = 0; j0 < width; j0 += 16) {
      const __mmask16 read = first_lanes(w - j0);
      const __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(read, lo_row + j0));
      const __m512i hi =
          has_hi ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(read, lo_row + ld + j0))
                 : _mm512_setzero_si512();
      _mm512_mask_storeu_epi32(dst + j0, first_lanes(width - j0),
                               _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
  }
}

void gemm_round_tile_avx512_bf16(const float* tile, int64_t nr, int h, int w, const float* bias,
                                 BFloat16* c, int64_t ldc) {
  // core/half.cpp's rounding on 16 lanes: add 0x7fff and the lowest kept bit, keep the top
  // half (ties to even; a carry may run into the exponent, up to Inf); a NaN keeps the top of
  // its payload, with the quiet bit set if nothing of it would be left.
  const __m512i one = _mm512_set1_epi32(1), below_half = _mm512_set1_epi32(0x7fff);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i payload_top = _mm512_set1_epi32(0x7f0000), quiet = _mm512_set1_epi32(0x40);
  for (int i = 0; i < h; ++i) {
    for (int j0 = 0; j0 < w; j0 += 16) {
      const __mmask16 lanes = first_lanes(w - j0);
      __m512 v = _mm512_maskz_loadu_ps(lanes, tile + i * nr + j0);
      if (bias != nullptr) v = _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, bias + j0), v);
      const __m512i x = _mm512_castps_si512(v);
      const __m512i top = _mm512_srli_epi32(x, 16);
      const __m512i carry = _mm512_add_epi32(below_half, _mm512_and_si512(top, one));
      __m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, carry), 16);
      const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, magnitude), inf);
      const __mmask16 empty_payload = _mm512_testn_epi32_mask(x, payload_top);
      r = _mm512_mask_mov_epi32(r, nan, _mm512_mask_or_epi32(top, empty_payload, top, quiet));
      _mm256_mask_storeu_epi16(static_cast<void*>(c + i * ldc + j0), lanes,
                               _mm512_cvtepi32_epi16(r));
    }
  }
}

void gemm_micro_avx512_bf16(int64_t kc, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc,
                            float alpha, float beta) {
  micro<Bf16Pairs, kAvx512MrBf16>(kc, a, b, c, ldc, alpha, beta);
}

}  // namespace tg::detail
#endif
