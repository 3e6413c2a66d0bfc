// ops/swiglu.cpp — swiglu(a, b) and silu_and_mul(x): kernels forward and backward, then the
// Functions that record them.
//
// B = batch, T = time, C = channels, V = vocab; H = hidden width of the MLP.
//
// forward:   out = silu(a) * b = a * s * b,   s = sigmoid(a)
// backward:  d(out)/db = silu(a)                          so  db = dout * silu(a)
//            d(out)/da = b * silu'(a)
//                      = b * s * (1 + a * (1 - s))        so  da = dout * b * s * (1 + a (1 - s))
// Both need a and b, so both are saved; s is recomputed (cheaper than storing it).
//
// silu_and_mul is the same math on one tensor of last dim 2H read as rows [a_0..a_H-1 |
// b_0..b_H-1]: the kernel walks rows, and the backward writes da and db into the two halves
// of one dx row — no split, no concatenation, no extra tensor.
#include "ops/swiglu.h"

#include <algorithm>

#include "core/parallel.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/reference_kernels.h"
#include "ops/vectorize.h"

namespace tg {
namespace {

using detail::ComputeType;

// ---------------------------------------------------------------- the kernels
// `rows` rows of `h` elements; a and b advance by `stride` per row (h for swiglu, where a and
// b are separate tensors; 2h for silu_and_mul, where b = a + h), out by h.
template <class T>
void swiglu_forward(const T* a, const T* b, T* out, int64_t rows, int64_t h, int64_t stride) {
  using C = ComputeType<T>;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const C av = convert<C>(a[r * stride + j]);
      const C bv = convert<C>(b[r * stride + j]);
      out[r * h + j] = convert<T>(av * detail::sigmoid_value(av) * bv);
    }
  }
}

// forward was: out = a * s * b, s = sigmoid(a)
// so:          da += dout * b * s * (1 + a * (1 - s)),   db += dout * a * s
// (da and db advance like a and b; either may be null when that gradient is not needed)
template <class T>
void swiglu_backward(const T* a, const T* b, const T* dout, T* da, T* db, int64_t rows, int64_t h,
                     int64_t stride) {
  using C = ComputeType<T>;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const int64_t i = r * stride + j;
      const C av = convert<C>(a[i]);
      const C bv = convert<C>(b[i]);
      const C d = convert<C>(dout[r * h + j]);
      if (da != nullptr) {
        da[i] =
            convert<T>(static_cast<C>(convert<C>(da[i]) + d * bv * detail::silu_derivative(av)));
      }
      if (db != nullptr) {
        db[i] = convert<T>(static_cast<C>(convert<C>(db[i]) + d * av * detail::sigmoid_value(av)));
      }
    }
  }
}

// ---------------------------------------------------------------- the fast kernels
// The same formulas on float and double (the half types keep the loops above), vectorised
// and split across threads (ops/vectorize.h has the loop shapes and the vectorisable
// sigmoid). Every element is computed on its own, so any split gives the same bits. One
// sweep: s is computed once per element and used for both da and db, and the gradients are
// written (=) into fresh buffers instead of being added into zero-filled ones. The results
// differ from the plain loops only through fast_exp (within a couple of ulp of std::exp).

constexpr int64_t kGrain = 16384;  // elements per thread piece: ~10 us or more

/// out = a * s * b for n elements, s = sigmoid(a).
template <class F>
[[gnu::noinline]] void swiglu_forward_span(const F* __restrict a, const F* __restrict b,
                                           F* __restrict out, int64_t n) {
  detail::simd_for(n,
                   [&](int64_t i) { out[i] = a[i] * detail::sigmoid_vectorizable(a[i]) * b[i]; });
}

/// da = dout * b * s * (1 + a (1 - s)) and db = dout * a * s, for n elements; either of da,
/// db may be null (not needed).
template <class F>
[[gnu::noinline]] void swiglu_backward_span(const F* __restrict a, const F* __restrict b,
                                            const F* __restrict dout, F* __restrict da,
                                            F* __restrict db, int64_t n) {
  auto da_of = [&](int64_t i, F s) { return dout[i] * b[i] * (s * (F(1) + a[i] * (F(1) - s))); };
  if (da != nullptr && db != nullptr) {
    detail::simd_for(n, [&](int64_t i) {
      const F s = detail::sigmoid_vectorizable(a[i]);
      da[i] = da_of(i, s);
      db[i] = dout[i] * a[i] * s;
    });
  } else if (da != nullptr) {
    detail::simd_for(n, [&](int64_t i) { da[i] = da_of(i, detail::sigmoid_vectorizable(a[i])); });
  } else if (db != nullptr) {
    detail::simd_for(
        n, [&](int64_t i) { db[i] = dout[i] * a[i] * detail::sigmoid_vectorizable(a[i]); });
  }
}

/// swiglu_forward's result for `rows` rows of h elements, a and b advancing by `stride` per
/// row: a flat range (rows = 1) is split by elements, rows by whole rows.
template <class F>
void swiglu_forward_fast(const F* a, const F* b, F* out, int64_t rows, int64_t h, int64_t stride) {
  if (rows == 1) {
    parallel_for(h, kGrain, [&](int64_t i0, int64_t i1) {
      swiglu_forward_span(a + i0, b + i0, out + i0, i1 - i0);
    });
    return;
  }
  parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(h, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   swiglu_forward_span(a + r * stride, b + r * stride, out + r * h, h);
                 }
               });
}

/// swiglu_backward's result, written: da and db (either may be null) advance like a and b.
template <class F>
void swiglu_backward_fast(const F* a, const F* b, const F* dout, F* da, F* db, int64_t rows,
                          int64_t h, int64_t stride) {
  auto at = [](F* p, int64_t offset) { return p != nullptr ? p + offset : nullptr; };
  if (rows == 1) {
    parallel_for(h, kGrain, [&](int64_t i0, int64_t i1) {
      swiglu_backward_span(a + i0, b + i0, dout + i0, at(da, i0), at(db, i0), i1 - i0);
    });
    return;
  }
  parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(h, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t o = r * stride;
                   swiglu_backward_span(a + o, b + o, dout + r * h, at(da, o), at(db, o), h);
                 }
               });
}

// Calls fn.template operator()<T>() for the floating stored type T of `dtype`.
template <class Fn>
void visit_floating(DType dtype, Fn&& fn) {
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>)
      fn.template operator()<T>();
  });
}

// True when the backward runs the fast kernel, which writes its gradients (float and double,
// reference kernels off); the plain kernel adds into zero-filled buffers.
bool writes_gradients(DType dtype) {
  return (dtype == kFloat32 || dtype == kFloat64) && !reference_kernels();
}

// ---------------------------------------------------------------- swiglu(a, b)

struct Swiglu : Function<Swiglu> {
  static constexpr std::string_view kName = "swiglu";
  static Tensor forward(Context<>& ctx, const Tensor& a, const Tensor& b) {
    detail::check_floating(a, "swiglu");
    detail::check_floating(b, "swiglu");
    detail::check_same_dtype(a, b, "swiglu");
    TG_CHECK(a.shape() == b.shape(), ShapeError,
             "swiglu: a {} and b {} must have the same shape (swiglu does not broadcast)",
             a.shape(), b.shape());
    const Tensor ac = a.contiguous(), bc = b.contiguous();
    ctx.save_for_backward(ac, bc);
    Tensor out = empty(a.shape(), a.dtype());
    const int64_t n = a.numel();
    visit_floating(a.dtype(), [&]<class T>() {
      if constexpr (std::is_floating_point_v<T>) {
        if (!reference_kernels()) {
          swiglu_forward_fast(ac.data<T>(), bc.data<T>(), out.data<T>(), 1, n, n);
          return;
        }
      }
      swiglu_forward(ac.data<T>(), bc.data<T>(), out.data<T>(), 1, n, n);
    });
    return out;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &a = saved[0], &b = saved[1];
    const Tensor dout = g[0].contiguous();
    // The fast kernel writes every element; the plain one adds into zeros.
    const bool fast = writes_gradients(a.dtype());
    auto make = [&](bool needed) {
      return !needed ? Tensor() : fast ? empty(a.shape(), a.dtype()) : zeros(a.shape(), a.dtype());
    };
    Tensor da = make(ctx.needs_input_grad(0)), db = make(ctx.needs_input_grad(1));
    const int64_t n = a.numel();
    visit_floating(a.dtype(), [&]<class T>() {
      T* pa = da.defined() ? da.data<T>() : nullptr;
      T* pb = db.defined() ? db.data<T>() : nullptr;
      if constexpr (std::is_floating_point_v<T>) {
        if (fast) {
          swiglu_backward_fast(a.data<T>(), b.data<T>(), dout.data<T>(), pa, pb, 1, n, n);
          return;
        }
      }
      swiglu_backward(a.data<T>(), b.data<T>(), dout.data<T>(), pa, pb, 1, n, n);
    });
    return {da, db};
  }
};

// ---------------------------------------------------------------- silu_and_mul(x)

struct SiluAndMul : Function<SiluAndMul> {
  static constexpr std::string_view kName = "silu_and_mul";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "silu_and_mul");
    TG_CHECK(x.dim() >= 1, ShapeError,
             "silu_and_mul: x must have at least one dim to split, got a 0-d tensor");
    const int64_t width = x.size(-1);
    TG_CHECK(width % 2 == 0, ShapeError,
             "silu_and_mul: the last dim of x {} must be even to split into [a | b], got {}",
             x.shape(), width);
    const Tensor xc = x.contiguous();
    ctx.save_for_backward(xc);
    Shape out_shape = x.shape();
    out_shape[out_shape.size() - 1] = width / 2;
    Tensor out = empty(out_shape, x.dtype());
    const int64_t h = width / 2;
    const int64_t rows = h == 0 ? 0 : out.numel() / h;
    if (rows == 0) return out;  // nothing to compute (and no pointer arithmetic on null)
    visit_floating(x.dtype(), [&]<class T>() {
      const T* p = xc.data<T>();
      if constexpr (std::is_floating_point_v<T>) {
        if (!reference_kernels()) {
          swiglu_forward_fast(p, p + h, out.data<T>(), rows, h, 2 * h);
          return;
        }
      }
      swiglu_forward(p, p + h, out.data<T>(), rows, h, 2 * h);
    });
    return out;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor dout = g[0].contiguous();
    // The fast kernel writes both halves of every row; the plain one adds into zeros.
    const bool fast = writes_gradients(x.dtype());
    Tensor dx = fast ? empty(x.shape(), x.dtype()) : zeros(x.shape(), x.dtype());
    const int64_t h = x.size(-1) / 2;
    const int64_t rows = h == 0 ? 0 : dout.numel() / h;
    if (rows == 0) return {dx};
    visit_floating(x.dtype(), [&]<class T>() {
      const T* p = x.data<T>();
      T* d = dx.data<T>();
      if constexpr (std::is_floating_point_v<T>) {
        if (fast) {
          swiglu_backward_fast(p, p + h, dout.data<T>(), d, d + h, rows, h, 2 * h);
          return;
        }
      }
      swiglu_backward(p, p + h, dout.data<T>(), d, d + h, rows, h, 2 * h);
    });
    return {dx};
  }
};

}  // namespace

Tensor swiglu(const Tensor& a, const Tensor& b, Here here) { return Swiglu::apply_at(here, a, b); }
Tensor silu_and_mul(const Tensor& x, Here here) { return SiluAndMul::apply_at(here, x); }

}  // namespace tg
