// ops/swiglu.h — swiglu(a, b) = silu(a) * b, and the fused silu_and_mul(x) of inference engines.
//
// B = batch, T = time, C = channels, V = vocab; H = hidden width of the MLP.
//   swiglu:       a (..., H), b (..., H) (the same shape, no broadcasting)  ->  out (..., H)
//   silu_and_mul: x (..., 2H) = [a | b] along the last dim                  ->  out (..., H)
// Dtypes: float32, float64, float16, bfloat16 (half types are computed in float).
//
// In a pre-norm Transformer (LLaMA-style) the MLP of every block is
//   out = W_down( swiglu(W_gate h, W_up h) ),   h = rms_norm(x)
// and engines fuse W_gate and W_up into one Linear of width 2H, whose output is split in
// half by silu_and_mul.
#pragma once

#include "core/autograd.h"
#include "ops/kernels.h"

namespace tg {

/// silu(a) * b, elementwise; a and b must have the same shape and dtype.
Tensor swiglu(const Tensor& a, const Tensor& b, Here here = Here::current());
/// silu(a) * b where a = x[..., :H] and b = x[..., H:], H = x.size(-1) / 2 (which must be even).
Tensor silu_and_mul(const Tensor& x, Here here = Here::current());

}  // namespace tg

// ---------------------------------------------------------------- the kernels
// Reference (ops/swiglu.cpp) and fast (ops/fast/swiglu.cpp), chosen by ops/kernels.h. `rows`
// rows of h elements in the compute type F; a and b (and da, db) advance by `stride` per row
// (h for swiglu, where a and b are separate tensors; 2h for silu_and_mul, where b = a + h),
// out and dout by h. The write rule of ops/kernels.h.
namespace tg::kernels {

template <class F>
using SwigluForward = void(const F* a, const F* b, F* out, int64_t rows, int64_t h, int64_t stride);
/// da and db; a null GradOut skips that gradient.
template <class F>
using SwigluBackward = void(const F* a, const F* b, const F* dout, GradOut<F> da, GradOut<F> db,
                            int64_t rows, int64_t h, int64_t stride);

extern KernelPair<SwigluForward, float, double> swiglu_forward;
extern KernelPair<SwigluBackward, float, double> swiglu_backward;

/// bfloat16 a, b and dout, read as they are and widened a few hundred elements at a time
/// (no widened copy of a whole tensor), computed in float32: out, da and db are each rounded
/// to bfloat16 once, a few hundred at a time too (da and db, laid out like a and b, are
/// written, never added into; either may be null). There is no reference version (get() is
/// null on the reference path): the reference story is the float one above, on inputs
/// widened to float32.
using SwigluForwardBF16 = void(const BFloat16* a, const BFloat16* b, BFloat16* out, int64_t rows,
                               int64_t h, int64_t stride);
using SwigluBackwardBF16 = void(const BFloat16* a, const BFloat16* b, const BFloat16* dout,
                                BFloat16* da, BFloat16* db, int64_t rows, int64_t h,
                                int64_t stride);
extern Kernel<SwigluForwardBF16> swiglu_forward_bf16;
extern Kernel<SwigluBackwardBF16> swiglu_backward_bf16;

}  // namespace tg::kernels
