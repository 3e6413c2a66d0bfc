// ops/activation.h — relu, sigmoid, tanh, silu, gelu: the pointwise non-linearities.
//
// B = batch, T = time, C = channels, V = vocab. Every function here is elementwise: x may have
// any shape and strides, and out has x's shape (contiguous) and dtype. Dtypes: float32 and
// float64, plus float16/bfloat16 (computed in float, rounded once on store).
//
// In a pre-norm Transformer block they sit in the MLP, between the two Linears:
//   h = x + W_down( act(W_up( rms_norm(x) )) )        (act = gelu in GPT-2, silu in SwiGLU)
//
// Kink convention (as PyTorch, pinned by tests/ops/activation_test.cpp): relu'(0) = 0.
#pragma once

#include <cmath>

#include "core/autograd.h"
#include "ops/kernels.h"

namespace tg {

/// max(x, 0). The gradient is 0 where out <= 0, so relu'(0) = 0; nan stays nan.
Tensor relu(const Tensor& x, Here here = Here::current());
/// 1 / (1 + e^-x), computed without overflow for large |x|.
Tensor sigmoid(const Tensor& x, Here here = Here::current());
/// The hyperbolic tangent.
Tensor tanh(const Tensor& x, Here here = Here::current());
/// x * sigmoid(x) (also called swish).
Tensor silu(const Tensor& x, Here here = Here::current());
/// x * Phi(x), Phi the standard normal CDF: 0.5 * x * (1 + erf(x / sqrt(2))). With
/// approximate = true, PyTorch's approximate='tanh' form:
/// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
Tensor gelu(const Tensor& x, bool approximate = false, Here here = Here::current());

}  // namespace tg

namespace tg::detail {

/// sigmoid(v) without overflow: e^-v is only computed for v >= 0, where it is <= 1, and
/// e^v for v < 0. C is float or double (the compute type).
template <class C>
C sigmoid_value(C v) {
  if (v >= C(0)) return C(1) / (C(1) + std::exp(-v));
  const C e = std::exp(v);
  return e / (C(1) + e);
}

}  // namespace tg::detail

// ---------------------------------------------------------------- the kernels
// relu and silu have a reference and a fast version of each kernel (ops/kernels.h): the plain
// loops in ops/activation.cpp, the vectorised and threaded ones in ops/fast/activation.cpp.
// n contiguous elements in the compute type F; the write rule of ops/kernels.h.
namespace tg::kernels {

/// y = f(x).
template <class F>
using ActivationForward = void(const F* x, F* y, int64_t n);
/// dx = f'(.) * dy, with f' computed from `saved`: relu's output y, or silu's input x.
template <class F>
using ActivationBackward = void(const F* saved, const F* dy, GradOut<F> dx, int64_t n);

extern KernelPair<ActivationForward, float, double> relu_forward;
extern KernelPair<ActivationBackward, float, double> relu_backward;
extern KernelPair<ActivationForward, float, double> silu_forward;
extern KernelPair<ActivationBackward, float, double> silu_backward;

}  // namespace tg::kernels
