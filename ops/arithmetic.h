// ops/arithmetic.h — add, sub, mul, div, neg, with broadcasting, and their operators.
//
// B = any broadcastable shapes: a (..., n) and b (n) give a result of shape (..., n);
// a (3, 1) and b (4) give (3, 4). Both tensors must have the same floating dtype.
// A double operand is a plain number, not a tensor: it gets no gradient, and it is
// computed in the tensor's compute type (float for float32/float16/bfloat16).
#pragma once

#include "core/autograd.h"

namespace tg {

/// a + b, broadcast.
Tensor add(const Tensor& a, const Tensor& b, Here here = Here::current());
/// a - b, broadcast.
Tensor sub(const Tensor& a, const Tensor& b, Here here = Here::current());
/// a * b, broadcast (elementwise, not matmul).
Tensor mul(const Tensor& a, const Tensor& b, Here here = Here::current());
/// a / b, broadcast (true division: b = 0 gives inf or nan, as in IEEE arithmetic).
Tensor div(const Tensor& a, const Tensor& b, Here here = Here::current());
/// -x.
Tensor neg(const Tensor& x, Here here = Here::current());

/// x + s.
Tensor add(const Tensor& x, double s, Here here = Here::current());
/// x - s.
Tensor sub(const Tensor& x, double s, Here here = Here::current());
/// s - x (PyTorch's rsub).
Tensor sub(double s, const Tensor& x, Here here = Here::current());
/// x * s.
Tensor mul(const Tensor& x, double s, Here here = Here::current());
/// x / s.
Tensor div(const Tensor& x, double s, Here here = Here::current());
/// s / x (`1.0 / x` is the reciprocal).
Tensor div(double s, const Tensor& x, Here here = Here::current());

/// An operand of an arithmetic operator. Converting a Tensor to it records the place of
/// the expression `a + b` in your source (a default argument is evaluated at the call
/// site), which operators cannot take as a parameter of their own.
struct Operand {
  Operand(const Tensor& t, Here where = Here::current()) : tensor(t), here(where) {}
  const Tensor& tensor;
  Here here;
};

// Tensor op Tensor
inline Tensor operator+(Operand a, const Tensor& b) { return add(a.tensor, b, a.here); }
inline Tensor operator-(Operand a, const Tensor& b) { return sub(a.tensor, b, a.here); }
inline Tensor operator*(Operand a, const Tensor& b) { return mul(a.tensor, b, a.here); }
inline Tensor operator/(Operand a, const Tensor& b) { return div(a.tensor, b, a.here); }
// Tensor op double
inline Tensor operator+(Operand x, double s) { return add(x.tensor, s, x.here); }
inline Tensor operator-(Operand x, double s) { return sub(x.tensor, s, x.here); }
inline Tensor operator*(Operand x, double s) { return mul(x.tensor, s, x.here); }
inline Tensor operator/(Operand x, double s) { return div(x.tensor, s, x.here); }
// double op Tensor
inline Tensor operator+(double s, Operand x) { return add(x.tensor, s, x.here); }
inline Tensor operator-(double s, Operand x) { return sub(s, x.tensor, x.here); }
inline Tensor operator*(double s, Operand x) { return mul(x.tensor, s, x.here); }
inline Tensor operator/(double s, Operand x) { return div(s, x.tensor, x.here); }
// -x
inline Tensor operator-(Operand x) { return neg(x.tensor, x.here); }

}  // namespace tg
