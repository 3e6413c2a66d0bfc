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

namespace tg {

/// The matrix product of a and b under the rules above (both floating, same dtype).
/// Accumulates in double for float64 and in float otherwise.
Tensor matmul(const Tensor& a, const Tensor& b, Here here = Here::current());

}  // namespace tg
