// ops/reduce_plan.h — what every reduction shares (internal to ops/reduce.cpp and
// ops/extreme.cpp): which dims it removes, and the one strided loop that folds x's elements
// into their groups (ops/reduce.cpp's top comment explains its trick).
#pragma once

#include "core/autograd.h"
#include "core/strided_loop.h"
#include "ops/compute.h"

namespace tg::detail {

/// Which dims a reduction removes, and the shapes around it.
struct Reduction {
  DimVec reduced;   // one flag per dim of x: 1 if reduced
  Shape keep;       // x's shape with the reduced dims set to 1
  Shape out;        // the result's shape
  int64_t count{};  // elements combined into each result
};

/// The plan of a reduction of x over `dims` (every dim when empty), checked: each dim in
/// range and listed once (errors name `op`).
Reduction plan(const Tensor& x, const DimVec& dims, bool keepdim, const char* op);

/// The upstream gradient of shape `out`, viewed as `keep` (every backward starts here).
inline Tensor as_keep(const Tensor& dout, const Shape& keep) { return dout.reshape(keep); }

/// acc[group(i)] = combine(acc[group(i)], x[i]) for every element i of x, in row-major
/// order. `acc` has shape `keep` and the compute type C.
template <class T, class C, class Combine>
void reduce_kernel(const Tensor& x, const Tensor& acc, Combine combine) {
  const Tensor target = acc.expand(x.shape());
  const T* px = x.data<T>();
  C* pa = target.data<C>();
  for_each_offset<2>(x.shape(), {&target.strides(), &x.strides()},
                     [&](const auto& o) { pa[o[0]] = combine(pa[o[0]], convert<C>(px[o[1]])); });
}

/// The reduction of x described by r: start every group at `init`, fold the elements in
/// with combine, then apply finish to each group. Returns shape `keep`, x's dtype.
template <class Combine, class Finish>
Tensor reduce(const Tensor& x, const Reduction& r, double init, Combine combine, Finish finish) {
  const DType ct = compute_type(x.dtype());
  Tensor acc = full(r.keep, init, ct);
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
      using C = ComputeType<T>;
      reduce_kernel<T, C>(x, acc, combine);
      C* pa = acc.data<C>();
      for (int64_t i = 0; i < acc.numel(); ++i) pa[i] = finish(pa[i]);
    }
  });
  return round_to(acc, x.dtype());
}

}  // namespace tg::detail
