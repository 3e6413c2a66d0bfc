// ops/fast/gemm_micro.h — internal to the micro-kernel files (gemm_avx2.cpp, gemm_avx512.cpp,
// gemm_avx512_bf16.cpp): the register-tiled micro-kernel, written once over a vector type S
// (S::V, S::load, S::fma, ...).
//
// Each of those files includes this header after defining its S types, and compiles it with
// its own instruction set. The template sits in an anonymous namespace on purpose: every
// file gets its own copy, so the linker can never pick the AVX-512 instance for the AVX2
// path (see ops/fast/gemm_kernels.h).
//
// S::T is the type of C, alpha, beta and the accumulators; S::P that of one packed value of
// A or B: T itself for float and double, or a pair of bfloat16 along k (two steps of p in one
// 32-bit word). kc counts packed values, and S::fma(a, b, acc) is the multiply-add of one
// step: a broadcast A value times a row of the B panel, added into the accumulators.
#pragma once

#include <cstdint>

namespace tg::detail {
namespace {

/// MR rows x two vectors of accumulators; each step of p loads one row of the B panel (two
/// vectors), broadcasts each of the MR values of the A column, and does 2*MR FMAs.
template <class S, int MR>
inline __attribute__((always_inline)) void micro(int64_t kc, const typename S::P* a,
                                                 const typename S::P* b, typename S::T* c,
                                                 int64_t ldc, typename S::T alpha,
                                                 typename S::T beta) {
  using T = typename S::T;
  using V = typename S::V;
  static_assert(sizeof(typename S::P) == sizeof(T), "a register holds as many P values as T");
  constexpr int kWidth = static_cast<int>(sizeof(V) / sizeof(T));  // elements per register
  // Ask for the C tile now, so that it is in L1 when the sum is done.
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    __builtin_prefetch(c + i * ldc, 1, 3);
    __builtin_prefetch(c + i * ldc + 2 * kWidth - 1, 1, 3);
  }
  V acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = S::zero();
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p) {
    const auto b0 = S::load(b), b1 = S::load(b + kWidth);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const auto ai = S::broadcast(a[i]);
      acc[i][0] = S::fma(ai, b0, acc[i][0]);
      acc[i][1] = S::fma(ai, b1, acc[i][1]);
    }
    a += MR;
    b += 2 * kWidth;
  }
  const V va = S::broadcast(alpha);
  if (beta == T(0)) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      S::storeu(c + i * ldc, S::mul(va, acc[i][0]));
      S::storeu(c + i * ldc + kWidth, S::mul(va, acc[i][1]));
    }
  } else {
    const V vb = S::broadcast(beta);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      T* row = c + i * ldc;
      S::storeu(row, S::fma(vb, S::loadu(row), S::mul(va, acc[i][0])));
      S::storeu(row + kWidth, S::fma(vb, S::loadu(row + kWidth), S::mul(va, acc[i][1])));
    }
  }
}

}  // namespace
}  // namespace tg::detail
