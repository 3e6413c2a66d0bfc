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
#pragma once

#include <cstdint>

namespace tg {

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);

/// The textbook loop: c_ij = alpha * sum_p op(A)_ip op(B)_pj + beta * c_ij, p ascending.
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                    int64_t ldc);
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                    const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                    double* c, int64_t ldc);

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

}  // namespace detail
}  // namespace tg
