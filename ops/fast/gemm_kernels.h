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
#pragma once

#include <cstdint>

namespace tg::detail {

template <class T>
using GemmMicroKernel = void (*)(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, T alpha,
                                 T beta);

// Tile shapes: NR is two vector registers wide; MR rows of accumulators leave room for the
// two B vectors and the broadcast A value (AVX-512 has 32 registers, AVX2 has 16).
inline constexpr int kAvx512MrF32 = 14, kAvx512NrF32 = 32;
inline constexpr int kAvx512MrF64 = 12, kAvx512NrF64 = 16;
inline constexpr int kAvx2MrF32 = 6, kAvx2NrF32 = 16;
inline constexpr int kAvx2MrF64 = 6, kAvx2NrF64 = 8;

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
void gemm_micro_avx2_f32(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                         float alpha, float beta);
void gemm_micro_avx2_f64(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                         double alpha, double beta);

}  // namespace tg::detail
