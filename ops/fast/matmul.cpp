// ops/fast/matmul.cpp — matmul's fast kernel: each product of the batch on the blocked GEMM
// (ops/fast/gemm.h), which reads a row-major or a transposed operand in place. Batch entries
// are independent products with outputs of their own, so threads split them (each output on
// one thread, computed as one thread would: the result does not depend on the thread count).
// One big product stays a single piece, and the GEMM threads it inside.
#include "ops/matmul.h"
#include "core/parallel.h"
#include "ops/fast/gemm.h"
#include "ops/fast/install.h"

namespace tg::fast {
namespace {

using kernels::MatrixBatch;

/// The GEMM's view of an operand of `rows` x `cols`: transposed or not, and its leading dim.
template <class F>
void as_gemm(const MatrixBatch<F>& x, int64_t rows, int64_t cols, bool* trans, int64_t* ld) {
  *trans = !(x.cs == 1 || cols == 1);  // row-major unless only the transposed view fits
  if (!*trans) *ld = rows == 1 ? cols : x.rs;
  else *ld = cols == 1 ? rows : x.cs;
}

template <class F>
void matmul_forward(const MatrixBatch<F>& a, const MatrixBatch<F>& b, F* out, int64_t count,
                    int64_t n, int64_t m, int64_t p) {
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  as_gemm(a, n, m, &ta, &lda);
  as_gemm(b, m, p, &tb, &ldb);
  parallel_rows(count, n * m * p / 16, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      gemm(ta, tb, n, p, m, F(1), a.data + a.offset(s), lda, b.data + b.offset(s), ldb, F(0),
           out + s * n * p, p);
    }
  });
}

}  // namespace

void install_matmul() {
  kernels::matmul_forward.set_fast(matmul_forward<float>, matmul_forward<double>);
}

}  // namespace tg::fast
