// ops/compute.h — where the fused ops do their arithmetic, and the copies into and out of it.
//
// Every fused op computes in one "compute type": double for float64, float for float32 and
// for the half types (float16/bfloat16 are widened once on the way in and the result is
// rounded once on the way out, so nothing is rounded to half precision in between). Its
// plain kernels take contiguous pointers of that type. These three helpers are the whole
// boundary; none of them records anything on the tape.
#pragma once

#include "core/factories.h"

namespace tg::detail {

/// double for float64; float for float32, float16 and bfloat16.
inline DType compute_type(DType dtype) { return dtype == kFloat64 ? kFloat64 : kFloat32; }

/// t itself if it is undefined or already contiguous in `ct`; else a contiguous copy
/// converted to `ct` (an exact widening for the half types).
inline Tensor as_compute(const Tensor& t, DType ct) {
  if (!t.defined() || (t.dtype() == ct && t.is_contiguous())) return t;
  Tensor c = empty(t.shape(), ct);
  c.copy_(t);
  return c;
}

/// A fresh contiguous copy of t in `ct`, never an alias: a buffer to accumulate into.
inline Tensor copy_in(const Tensor& t, DType ct) {
  Tensor c = empty(t.shape(), ct);
  c.copy_(t);
  return c;
}

/// A compute-type result rounded once to `dtype` (t itself when it already has it).
inline Tensor round_to(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = empty(t.shape(), dtype);
  out.copy_(t);
  return out;
}

}  // namespace tg::detail
