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

#include "ops/activation.h"
#include "ops/elementwise.h"

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

// Calls fn.template operator()<T>() for the floating stored type T of `dtype`.
template <class Fn>
void visit_floating(DType dtype, Fn&& fn) {
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>)
      fn.template operator()<T>();
  });
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
      swiglu_forward(ac.data<T>(), bc.data<T>(), out.data<T>(), 1, n, n);
    });
    return out;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &a = saved[0], &b = saved[1];
    const Tensor dout = g[0].contiguous();
    Tensor da = ctx.needs_input_grad(0) ? zeros(a.shape(), a.dtype()) : Tensor();
    Tensor db = ctx.needs_input_grad(1) ? zeros(b.shape(), b.dtype()) : Tensor();
    const int64_t n = a.numel();
    visit_floating(a.dtype(), [&]<class T>() {
      swiglu_backward(a.data<T>(), b.data<T>(), dout.data<T>(),
                      da.defined() ? da.data<T>() : nullptr, db.defined() ? db.data<T>() : nullptr,
                      1, n, n);
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
      swiglu_forward(p, p + h, out.data<T>(), rows, h, 2 * h);
    });
    return out;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor dout = g[0].contiguous();
    Tensor dx = zeros(x.shape(), x.dtype());
    const int64_t h = x.size(-1) / 2;
    const int64_t rows = h == 0 ? 0 : dout.numel() / h;
    if (rows == 0) return {dx};
    visit_floating(x.dtype(), [&]<class T>() {
      const T* p = x.data<T>();
      T* d = dx.data<T>();
      swiglu_backward(p, p + h, dout.data<T>(), d, d + h, rows, h, 2 * h);
    });
    return {dx};
  }
};

}  // namespace

Tensor swiglu(const Tensor& a, const Tensor& b, Here here) { return Swiglu::apply_at(here, a, b); }
Tensor silu_and_mul(const Tensor& x, Here here) { return SiluAndMul::apply_at(here, x); }

}  // namespace tg
