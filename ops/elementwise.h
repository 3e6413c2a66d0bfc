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
//
// Two loops do the walking. The general one is the strided odometer loop
// (core/strided_loop.h), which handles any view and any broadcast. The flat one takes the
// common cases, float32 or float64 operands that are contiguous and of the output's shape,
// or a single-element operand (a scalar broadcast): then element i of every operand is at
// [i], and one loop over raw pointers, vectorised (core/simd.h) and split over threads, does
// it. Both call f on the same values, element by element, so their results are bit-identical:
// they are one kernel walked two ways, not a reference and a fast version (ops/kernels.h).
#pragma once

#include <type_traits>

#include "core/broadcast.h"
#include "core/factories.h"
#include "core/parallel.h"
#include "core/simd.h"
#include "core/strided_loop.h"
#include "core/tensor.h"
#include "ops/compute.h"

namespace tg::detail {

/// DTypeError naming `op` unless `t` holds floating-point values.
void check_floating(const Tensor& t, const char* op);
/// DTypeError naming `op` and both dtypes unless they are equal.
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);

// The flat loops, over n elements: simd_for's blocks of kLanes (core/simd.h says why GCC
// needs that shape). __restrict promises that `out` overlaps no input (it is
// always a fresh tensor), so no run-time overlap check is needed either; noinline, because
// GCC forgets that promise when it inlines the function into its caller.
template <class T, class F>
[[gnu::noinline]] void unary_range(const T* __restrict x, T* __restrict out, int64_t n,
                                   const F& f) {
  simd_for(n, [&](int64_t i) { out[i] = static_cast<T>(f(x[i])); });
}

template <class T, class F>
[[gnu::noinline]] void binary_range(const T* __restrict a, const T* __restrict b, T* __restrict out,
                                    int64_t n, const F& f) {
  simd_for(n, [&](int64_t i) { out[i] = static_cast<T>(f(a[i], b[i])); });
}

/// True when the flat loop can read t as is: float32 or float64 (no rounding step between
/// storage and compute type) and contiguous.
inline bool is_flat(const Tensor& t) {
  return (t.dtype() == kFloat32 || t.dtype() == kFloat64) && t.is_contiguous();
}

/// out[i] = f(x[i]) for a floating-point x; f receives and returns the compute type.
template <class F>
Tensor unary_map(const Tensor& x, F f) {
  Tensor out = empty(x.shape(), x.dtype());
  if (is_flat(x)) {
    visit_compute(x.dtype(), [&]<class T>() {
      const T* in = x.data<T>();
      T* o = out.data<T>();
      parallel_rows(x.numel(), 2, [&](int64_t begin, int64_t end) {
        unary_range(in + begin, o + begin, end - begin, f);
      });
    });
    return out;
  }
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
  Tensor out = empty(shape, a.dtype());
  if (a.dtype() == b.dtype()) {
    // the flat cases: both of the output's shape, or one a single element (a scalar)
    const bool a_full = a.shape() == shape && is_flat(a);
    const bool b_full = b.shape() == shape && is_flat(b);
    const bool a_one = a.numel() == 1 && is_flat(a), b_one = b.numel() == 1 && is_flat(b);
    if ((a_full || a_one) && (b_full || b_one)) {
      visit_compute(a.dtype(), [&]<class T>() {
        const T* pa = a.data<T>();
        const T* pb = b.data<T>();
        T* o = out.data<T>();
        const T sa = a_one ? pa[0] : T(0), sb = b_one ? pb[0] : T(0);
        auto with_b = [&](T u) { return f(u, sb); };  // b is a scalar
        auto with_a = [&](T v) { return f(sa, v); };  // a is a scalar
        parallel_rows(out.numel(), 3, [&](int64_t begin, int64_t end) {
          const int64_t n = end - begin;
          if (a_full && b_full) binary_range(pa + begin, pb + begin, o + begin, n, f);
          else if (a_full) unary_range(pa + begin, o + begin, n, with_b);
          else unary_range(pb + begin, o + begin, n, with_a);  // b_full, or one element each
        });
      });
      return out;
    }
  }
  const Tensor ea = a.expand(shape), eb = b.expand(shape);
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
