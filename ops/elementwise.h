// ops/elementwise.h — the loops under every elementwise op, forward and backward.
//
// An elementwise op applies a scalar function to each element (unary) or to each pair of
// elements of two broadcast inputs (binary). The loops here do the broadcasting and the
// strided walking once, so each op file only states its math:
//
//   Tensor y = unary_map(x, [](auto v) { return std::exp(v); });
//   Tensor z = binary_map(a, b, "mul", [](auto u, auto v) { return u * v; });
//
// Values are computed in double for float64 tensors and in float for everything else
// (float16/bfloat16 are widened on load and rounded once on store).
#pragma once

#include <type_traits>

#include "core/broadcast.h"
#include "core/factories.h"
#include "core/strided_loop.h"
#include "core/tensor.h"

namespace tg::detail {

/// The type arithmetic happens in for elements of type T.
template <class T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// DTypeError naming `op` unless `t` holds floating-point values.
void check_floating(const Tensor& t, const char* op);
/// DTypeError naming `op` and both dtypes unless they are equal.
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);

/// out[i] = f(x[i]) for a floating-point x; f receives and returns the compute type.
template <class F>
Tensor unary_map(const Tensor& x, F f) {
  Tensor out = empty(x.shape(), x.dtype());
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<ComputeType<T>> && !std::is_same_v<T, int64_t> &&
                  !std::is_same_v<T, bool>) {
      using C = ComputeType<T>;
      const T* in = x.data<T>();
      T* o = out.data<T>();
      for_each_offset<2>(x.shape(), {&out.strides(), &x.strides()}, [&](const auto& off) {
        o[off[0]] = convert<T>(static_cast<C>(f(convert<C>(in[off[1]]))));
      });
    }
  });
  return out;
}

/// out = f(a, b) with a and b broadcast against each other (same floating dtype).
template <class F>
Tensor binary_map(const Tensor& a, const Tensor& b, const char* op, F f) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  const Tensor ea = a.expand(shape), eb = b.expand(shape);
  Tensor out = empty(shape, a.dtype());
  visit_dtype(a.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
      using C = ComputeType<T>;
      const T* pa = ea.data<T>();
      const T* pb = eb.data<T>();
      T* o = out.data<T>();
      for_each_offset<3>(
          shape, {&out.strides(), &ea.strides(), &eb.strides()}, [&](const auto& off) {
            o[off[0]] =
                convert<T>(static_cast<C>(f(convert<C>(pa[off[1]]), convert<C>(pb[off[2]]))));
          });
    }
  });
  return out;
}

}  // namespace tg::detail
