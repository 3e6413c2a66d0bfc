// ops/fast/gemm.h — general matrix multiply on raw row-major buffers (no Tensors, no autograd).
//
//   C = alpha * op(A) op(B) + beta * C,    op(X) = X or X^T,
//
// op(A) is (m, k), op(B) is (k, n), C is (m, n). Every matrix is row-major with a leading
// dimension: element (i, j) of a stored matrix X sits at X[i * ldx + j]. A transposed
// operand is read in place, so dx = dy W (NN), y = x W^T (NT) and dW = dy^T x (TN) need no
// transposed copy. When beta == 0, C is only written (it may hold garbage or NaN).
//
// The engine under the fast kernels of linear, matmul and attention (ops/fast/): packed
// panels, cache blocking, a register-tiled micro-kernel for AVX-512, AVX2 or any CPU, picked
// at run time. gemm_reference() is the plain triple loop the tests hold it to. The same
// inputs on the same path always give bit-identical results; different paths differ only in
// rounding (the order and fusing of the multiply-adds).
//
// bfloat16 operands, float32 C. A bfloat16 has an 8-bit significand (7 stored bits and the
// implicit 1), so the product of two has at most 8 + 8 = 16 significant bits and fits in
// float32's 24 exactly, as long as it stays in float32's normal range (past ~3.4e38 it is
// Inf, below 2^-126 it may round). The products are exact: only the float32 sums round.
// Each term of a sum of k goes through at most k - 1 additions, each rounding by a factor
// (1 + d), |d| <= u = 2^-24; so in any order of summation (Higham, Accuracy and Stability of
// Numerical Algorithms, section 3.1)
//
//   |c_ij - c_exact| <= gamma_k * sum_p |a_ip| |b_pj|,    gamma_k = k u / (1 - k u),
//
// c_exact being the exact sum of the same bfloat16 inputs: their own rounding to bfloat16
// is not counted, only the sums'. alpha and beta add two roundings (a product and a sum):
//
//   |c_ij - (alpha c_exact + beta c0_ij)| <= gamma_(k+2) (|alpha| sum_p |a_ip| |b_pj| +
//                                                         |beta c0_ij|).
//
// Both paths, and gemm_reference, stay within it:
//   - "dot", where the CPU has AVX512-BF16: vdpbf16ps adds two products per lane and step.
//     It ignores MXCSR: it rounds to nearest even, treats bfloat16 denormal inputs as zero
//     and flushes float denormal results to zero, so a product or partial sum below 2^-126
//     in magnitude may also lose up to 2^-126 (absolute), beyond the bound.
//   - "widen", everywhere else: the packing widens the panels to float and the float kernel
//     of the current GemmPath runs, with the denormals of ordinary float code.
// detail::set_gemm_bf16_dot(false) forces the widening path (tests, benchmarks).
#pragma once

#include <cstdint>

#include "core/half.h"

namespace tg {

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);
/// bfloat16 operands, float32 C and float32 sums (see the bound above).
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb, float beta, float* c,
          int64_t ldc);

/// bfloat16 C: c_ij = bf16(bias_j + sum_p op(A)_ip op(B)_pj), the sum as gemm() forms it
/// above, bias (n values) may be null. The same numbers as gemm() into a float C holding the
/// bias (beta 1) followed by a rounding pass, but where the dot path runs and k fits one of
/// its KC blocks, each finished tile is rounded while it is in L1: the float C never goes
/// to memory and back (for a linear's output, the pass that cost most of the rounding).
void gemm_round(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const BFloat16* a,
                int64_t lda, const BFloat16* b, int64_t ldb, const float* bias, BFloat16* c,
                int64_t ldc);

/// The textbook loop: c_ij = alpha * sum_p op(A)_ip op(B)_pj + beta * c_ij, p ascending.
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                    int64_t ldc);
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                    const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                    double* c, int64_t ldc);
/// The same loop on bfloat16, each value widened to float, the sum a float.
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb, float beta,
                    float* c, int64_t ldc);

namespace detail {

/// Which micro-kernel gemm() uses. kAuto picks the best this CPU supports.
enum class GemmPath { kAuto, kPortable, kAvx2, kAvx512 };

/// Forces a path (for tests and benchmarks); the previous choice is returned.
GemmPath set_gemm_path(GemmPath path);
/// True when this CPU (and this build) can run `path`.
bool gemm_path_supported(GemmPath path);
/// The path kAuto resolves to on this CPU.
GemmPath best_gemm_path();
const char* gemm_path_name(GemmPath path);

/// The bfloat16 gemm's "dot" path (vdpbf16ps) is on wherever this CPU has AVX512-BF16;
/// off, it widens to float for the float kernel of the current GemmPath. Switching it on
/// where the CPU lacks it throws ValueError. Returns the previous setting.
bool set_gemm_bf16_dot(bool on);
/// True when this CPU (and this build) can run the dot path.
bool gemm_bf16_dot_supported();
/// The bfloat16 path in use now: "avx512_bf16", or "widen+" and the float path's name.
const char* gemm_bf16_path_name();

}  // namespace detail
}  // namespace tg
