// ops/reduce.h — reductions: sum, mean, amax/amin, and max/min with their indices.
//
// A reduction combines the elements along some dims into one value each:
//
//   x (2, 3, 4)   sum(x, {1})           -> (2, 4)        out[a, c] = sum_b x[a, b, c]
//                 sum(x, {1}, true)     -> (2, 1, 4)     keepdim: reduced dims stay, size 1
//                 sum(x) == sum(x, {})  -> ()            no dims listed means every dim
//
// Dims may be negative (-1 is the last); listing a dim twice is an error. As in PyTorch,
// a 0-d tensor accepts dim 0 or -1 and reduces to itself.
//
// Every backward spreads the gradient of one result back over the elements that made it:
// re-insert the reduced dims as size 1 (when keepdim was false), expand to x's shape, and
// weight each element by how much it counted — 1 for sum, 1/count for mean, and for the
// extremes only the winners get a share.
//
// Values are accumulated in double for float64 and in float otherwise (float16/bfloat16
// are widened as they are read and rounded once at the end), in row-major order, so the
// results do not depend on scheduling. Inputs must be floating point.
#pragma once

#include "core/autograd.h"
#include "ops/kernels.h"

namespace tg {

/// Sum over `dims` (every dim when empty); sum(x) of an empty tensor is 0.
Tensor sum(const Tensor& x, const DimVec& dims = {}, bool keepdim = false,
           Here here = Here::current());

/// Mean over `dims` (every dim when empty). Like PyTorch, the mean of zero elements is NaN
/// (0 / 0), not an error.
Tensor mean(const Tensor& x, const DimVec& dims = {}, bool keepdim = false,
            Here here = Here::current());

/// Largest value over `dims` (every dim when empty). NaN wins: a group holding a NaN has
/// a NaN maximum. Reducing over a dim of size 0 is an error (no maximum exists).
/// Gradient: split EVENLY among the elements equal to the maximum (ties), as PyTorch does.
Tensor amax(const Tensor& x, const DimVec& dims = {}, bool keepdim = false,
            Here here = Here::current());
/// Smallest value over `dims`; same rules as amax.
Tensor amin(const Tensor& x, const DimVec& dims = {}, bool keepdim = false,
            Here here = Here::current());

/// What max(x, dim) and min(x, dim) return, like torch.return_types.max.
struct ValuesIndices {
  Tensor values;   ///< the extreme values, differentiable
  Tensor indices;  ///< int64 positions along dim, not differentiable
};

/// Largest value along `dim` and its index. On ties the FIRST occurrence wins (as PyTorch
/// on CPU); a NaN beats any number, and the first NaN wins. The gradient goes only to the
/// element at the returned index. Error if `dim` has size 0.
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false, Here here = Here::current());
/// Smallest value along `dim` and its index; same rules as max.
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false, Here here = Here::current());

/// Largest element of x, as a 0-d tensor: amax over every dim (gradient split evenly among
/// ties, as PyTorch's max(x)). Error for an empty tensor.
Tensor max(const Tensor& x, Here here = Here::current());
/// Smallest element of x, as a 0-d tensor; same rules as max(x).
Tensor min(const Tensor& x, Here here = Here::current());

}  // namespace tg

// ---------------------------------------------------------------- the kernels
// When the summed dims are the last ones (a full sum included) and x is float32 or float64,
// every group is one contiguous run of n elements: x is (rows, n), and sum and mean run this
// pair: the reference loop in ops/reduce.cpp, the fast one (vectorised row sums, rows on
// threads) in ops/fast/reduce.cpp, chosen by ops/kernels.h.
namespace tg::kernels {

/// out[r] = sum of x[r * n .. r * n + n) (written).
template <class F>
using SumRows = void(const F* x, F* out, int64_t rows, int64_t n);

extern KernelPair<SumRows, float, double> sum_rows;

}  // namespace tg::kernels
