// ops/matmul.h — matrix product with torch.matmul's rules.
//
// Shape legend: n = rows of a, m = the inner (contracted) dim, p = columns of b;
// `...` are batch dims, which broadcast like elementwise shapes.
//
//   a            b              matmul(a, b)
//   (m)          (m)            ()            dot product
//   (n, m)       (m, p)         (n, p)        matrix product
//   (m)          (..., m, p)    (..., p)      a is treated as (1, m), then that 1 is removed
//   (..., n, m)  (m)            (..., n)      b is treated as (m, 1), then that 1 is removed
//   (j, 1, n, m) (k, m, p)      (j, k, n, p)  batch dims (j, 1) and (k) broadcast to (j, k)
//
// 0-d inputs are an error (use mul for scaling).
#pragma once

#include "core/autograd.h"
#include "ops/kernels.h"

namespace tg {

/// The matrix product of a and b under the rules above (both floating, same dtype).
/// Accumulates in double for float64 and in float otherwise.
Tensor matmul(const Tensor& a, const Tensor& b, Here here = Here::current());

}  // namespace tg

// ---------------------------------------------------------------- the kernels
// Reference (ops/matmul.cpp) and fast (ops/fast/matmul.cpp, on the blocked GEMM), chosen by
// ops/kernels.h: `count` products out[s] = a[s] @ b[s] of (n, m) @ (m, p) matrices, in the
// compute type F. The operands are read in place; out is contiguous (count, n, p), written.
namespace tg::kernels {

/// One operand: element (i, j) of batch entry s is at data[offset(s) + i * rs + j * cs], where
/// s runs row-major over `batch` and moves by `batch_strides` (0 along a broadcast dim). One
/// of rs and cs is 1 (or its dim has one element): a row-major matrix or a transposed one.
template <class F>
struct MatrixBatch {
  const F* data = nullptr;
  int64_t rs = 0, cs = 0;
  Shape batch;
  Strides batch_strides;
  int64_t offset(int64_t s) const {
    int64_t o = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      o += (s % batch[d]) * batch_strides[d];
      s /= batch[d];
    }
    return o;
  }
  F at(int64_t s_offset, int64_t i, int64_t j) const { return data[s_offset + i * rs + j * cs]; }
};

template <class F>
using MatmulForward = void(const MatrixBatch<F>& a, const MatrixBatch<F>& b, F* out, int64_t count,
                           int64_t n, int64_t m, int64_t p);

extern KernelPair<MatmulForward, float, double> matmul_forward;

}  // namespace tg::kernels
