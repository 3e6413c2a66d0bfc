// ops/compute.h — the compute type every kernel works in, and the copies into and out of it.
//
// Kernels compute in one "compute type": double for float64, float for float32 and for the
// half types (float16/bfloat16 are widened once on the way in and the result is rounded
// once on the way out, so nothing is rounded to half precision in between). A Function
// hands its kernels contiguous pointers of that type; these helpers are the whole boundary,
// and none of them records anything on the tape.
#pragma once

#include <type_traits>

#include "core/autograd.h"
#include "core/factories.h"
#include "ops/kernels.h"

namespace tg::detail {

/// The compute type of stored type T: double for double, float for everything else.
template <class T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// The compute dtype of `dtype`: float64 for float64, float32 for the other floating types.
inline DType compute_type(DType dtype) { return dtype == kFloat64 ? kFloat64 : kFloat32; }

/// Calls fn.template operator()<F>() with F = double for float64, float otherwise.
template <class Fn>
void visit_compute(DType ct, Fn&& fn) {
  if (ct == kFloat64) fn.template operator()<double>();
  else fn.template operator()<float>();
}

/// t itself if it is undefined or already contiguous in `ct`; else a contiguous copy
/// converted to `ct` (an exact widening for the half types).
inline Tensor as_compute(const Tensor& t, DType ct) {
  if (!t.defined() || (t.dtype() == ct && t.is_contiguous())) return t;
  Tensor c = empty(t.shape(), ct);
  c.copy_(t);
  return c;
}

/// A compute-type result rounded once to `dtype` (t itself when it already has it). A dense
/// t keeps its layout, as torch's .to() does: attention's dq, laid out (B, T, H, D) and seen
/// as (B, H, T, D), stays a view that the transpose and reshape before it undo for free,
/// where a contiguous copy would make each of them copy again.
inline Tensor round_to(const Tensor& t, DType dtype) {
  if (!t.defined() || t.dtype() == dtype) return t;
  Tensor out = t.is_contiguous() || !is_dense(t.shape(), t.strides())
                   ? empty(t.shape(), dtype)
                   : make_view(empty({t.numel()}, dtype), t.shape(), t.strides(), 0);
  out.copy_(t);
  return out;
}

/// The kernel's view of a gradient buffer (Context::grad_buffer): null when not needed.
template <class F>
kernels::GradOut<F> grad_out(const GradBuffer& b) {
  return {b.tensor.defined() ? b.tensor.data<F>() : nullptr, b.add};
}

/// What a backward returns for a gradient its kernel filled: undefined if it was not needed,
/// the input's .grad itself if the kernel added into it (the engine then knows it is
/// delivered), else the buffer rounded to the input's dtype.
inline Tensor finish_grad(const GradBuffer& b, DType dtype) {
  if (!b.tensor.defined() || b.add) return b.tensor;
  return round_to(b.tensor, dtype);
}

}  // namespace tg::detail
