// ops/fast/gemm_kernels.h — internal to ops/fast/gemm.cpp: the register-tiled micro-kernels.
//
// A micro-kernel computes one MR x NR tile of C from packed panels:
//
//   tile = sum_{p < kc} a[p*MR + i] * b[p*NR + j]      (a: MR rows of op(A), column by column;
//                                                       b: NR columns of op(B), row by row)
//   C[i*ldc + j] = alpha * tile_ij + beta * C[i*ldc + j]   (C is not read when beta == 0)
//
// The AVX-512 and AVX2 kernels live in their own files, compiled with those instruction
// sets enabled even in a portable build; gemm.cpp calls them only after asking the CPU.
// This header is included by those files, so it must stay free of inline code.
//
// The bfloat16 kernel packs pairs along k: a packed value is one 32-bit word holding
// X(p, j) in its low half and X(p + 1, j) in its high half (0 past the last p), and a panel
// of kc values of k has ceil(kc / 2) rows of them. Its kc counts those rows.
#pragma once

#include <cstdint>

#include "core/half.h"

namespace tg::detail {

/// T: the type of C, alpha and beta; P: that of the packed panels (T, or bfloat16 pairs).
template <class T, class P = T>
using GemmMicroKernel = void (*)(int64_t kc, const P* a, const P* b, T* c, int64_t ldc, T alpha,
                                 T beta);

// Tile shapes: NR is two vector registers wide; MR rows of accumulators leave room for the
// two B vectors and the broadcast A value (AVX-512 has 32 registers, AVX2 has 16).
inline constexpr int kAvx512MrF32 = 14, kAvx512NrF32 = 32;
inline constexpr int kAvx512MrF64 = 12, kAvx512NrF64 = 16;
inline constexpr int kAvx2MrF32 = 6, kAvx2NrF32 = 16;
inline constexpr int kAvx2MrF64 = 6, kAvx2NrF64 = 8;
inline constexpr int kAvx512MrBf16 = 14, kAvx512NrBf16 = 32;  // float accumulators, as F32

void gemm_micro_avx512_f32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                           float alpha, float beta);
/// Packs `w` rows of a row-major matrix (row j at src + j * ld, read along kc values)
/// transposed into rows of `width`: dst[p * width + j] = src[j * ld + p] for j < w, 0 for
/// w <= j < width (the packing of a panel whose rows are stored contiguously, with 16 x 16
/// register transposes; w <= width <= 32).
void gemm_pack_transposed_avx512_f32(const float* src, int64_t ld, int64_t kc, int w, int width,
                                     float* dst);
/// Packs kc rows of `w` contiguous values (row p at src + p * ld) into rows of `width`:
/// dst[p * width + j] = src[p * ld + j] for j < w, 0 for w <= j < width (w <= width <= 32).
/// The packing of a panel whose columns are stored contiguously (a row-major B, or a
/// transposed A), with masked vector loads and stores instead of a copy call per row.
void gemm_pack_rows_avx512_f32(const float* src, int64_t ld, int64_t kc, int w, int width,
                               float* dst);
void gemm_micro_avx512_f64(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                           double alpha, double beta);
/// vdpbf16ps (AVX512-BF16): kc rows of bfloat16 pairs, float accumulators.
void gemm_micro_avx512_bf16(int64_t kc, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc,
                            float alpha, float beta);
/// The two packings above, for bfloat16 pairs: element (p, j) of the panel is
/// src[j * ld + p] (pairs adjacent in memory: 16 x 16 transposes of 32-bit words) or
/// src[p * ld + j] (rows p and p + 1 interleaved); dst gets ceil(kc / 2) rows of `width` words.
void gemm_pack_pairs_transposed_avx512_bf16(const BFloat16* src, int64_t ld, int64_t kc, int w,
                                            int width, uint32_t* dst);
void gemm_pack_pairs_rows_avx512_bf16(const BFloat16* src, int64_t ld, int64_t kc, int w, int width,
                                      uint32_t* dst);
/// gemm_round's epilogue: the h x w float sums of a tile (row stride nr), plus bias[j] when
/// bias is not null, each rounded to bfloat16 into c (row stride ldc): bit for bit the
/// rounding of core/half.h's BFloat16(float), 16 lanes at a time.
void gemm_round_tile_avx512_bf16(const float* tile, int64_t nr, int h, int w, const float* bias,
                                 BFloat16* c, int64_t ldc);
void gemm_micro_avx2_f32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                         float alpha, float beta);
void gemm_micro_avx2_f64(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                         double alpha, double beta);

}  // namespace tg::detail
