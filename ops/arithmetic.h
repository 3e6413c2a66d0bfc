// ops/arithmetic.h — add, sub, mul, div, neg, with broadcasting, and their operators.
//
// B = any broadcastable shapes: a (..., n) and b (n) give a result of shape (..., n).
#pragma once

#include "core/autograd.h"

namespace tg {

Tensor add(const Tensor& a, const Tensor& b, Here here = Here::current());
Tensor mul(const Tensor& a, const Tensor& b, Here here = Here::current());

/// An operand of an arithmetic operator. Converting a Tensor to it records the place of
/// the expression `a + b` in your source (a default argument is evaluated at the call
/// site), which operators cannot take as a parameter of their own.
struct Operand {
  Operand(const Tensor& t, Here where = Here::current()) : tensor(t), here(where) {}
  const Tensor& tensor;
  Here here;
};

inline Tensor operator+(Operand a, const Tensor& b) { return add(a.tensor, b, a.here); }
inline Tensor operator*(Operand a, const Tensor& b) { return mul(a.tensor, b, a.here); }

}  // namespace tg
