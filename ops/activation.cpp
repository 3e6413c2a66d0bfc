// ops/activation.cpp — relu, sigmoid, tanh, silu, gelu: kernels forward and backward, then
// the Functions that record them.
//
// B = batch, T = time, C = channels, V = vocab (every op here is elementwise: any shape).
//
// The math, forward and the derivative its backward multiplies dout by:
//   relu:     y = max(x, 0)                 dy/dx = 1 if y > 0 else 0     (from y)
//   sigmoid:  y = 1 / (1 + e^-x)            dy/dx = y * (1 - y)           (from y)
//   tanh:     y = tanh(x)                   dy/dx = 1 - y^2               (from y)
//   silu:     y = x * s, s = sigmoid(x)     dy/dx = s * (1 + x * (1 - s)) (from x)
//   gelu:     y = x * Phi(x)                dy/dx = Phi(x) + x * phi(x)   (from x)
// Where the derivative is a function of y alone, the forward saves y (no need to keep x or
// to recompute e^-x); silu and gelu need x itself, so they save x.
//
// Each kernel works on contiguous memory: T is the stored type, C the compute type (double
// for float64, float otherwise); backward kernels accumulate into dx with +=.
#include "ops/activation.h"

#include <cmath>

#include "core/parallel.h"
#include "ops/elementwise.h"
#include "ops/reference_kernels.h"
#include "ops/vectorize.h"

namespace tg {
namespace {

using detail::ComputeType;

// dx[i] += v, for any stored type (half types are widened, added, rounded back).
template <class T, class C>
void accumulate(T& dx, C v) {
  dx = convert<T>(static_cast<C>(convert<C>(dx) + v));
}

// ---------------------------------------------------------------- relu
template <class T>
void relu_forward(const T* x, T* y, int64_t n) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) {
    const C v = convert<C>(x[i]);
    y[i] = convert<T>(v < C(0) ? C(0) : v);  // not max(v, 0): nan must stay nan, as in PyTorch
  }
}
// forward was: y = max(x, 0), so dy/dx = 1 where y > 0 and 0 where y <= 0 — including x = 0,
// where the kink is: relu'(0) = 0 (PyTorch's choice). The mask is read from y, not x.
template <class T>
void relu_backward(const T* y, const T* dy, T* dx, int64_t n) {
  // exercise relu.backward: begin
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) {
    if (!(convert<C>(y[i]) <= C(0))) accumulate(dx[i], convert<C>(dy[i]));  // nan passes
  }
  // exercise relu.backward: end
}

// The fast kernels (float and double, unless the reference kernels are on; run by
// run_fast_forward/backward below): the same selections as whole-vector blends
// (ops/vectorize.h), with no branch per element to mispredict on the random signs of
// activations. dx is written, not added into zeros, which differs only in the sign of a
// zero gradient.
template <class F>
[[gnu::noinline]] void relu_forward_span(const F* __restrict x, F* __restrict y, int64_t n) {
  detail::simd_for(n, [&](int64_t i) {
    const F v = x[i];
    y[i] = v < F(0) ? F(0) : v;
  });
}
template <class F>
[[gnu::noinline]] void relu_backward_span(const F* __restrict y, const F* __restrict dy,
                                          F* __restrict dx, int64_t n) {
  detail::simd_for(n, [&](int64_t i) {
    const F g = dy[i];  // loaded for every i, so that the choice below is a blend, not a branch
    dx[i] = y[i] <= F(0) ? F(0) : g;
  });
}

// ---------------------------------------------------------------- sigmoid
template <class T>
void sigmoid_forward(const T* x, T* y, int64_t n) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) y[i] = convert<T>(detail::sigmoid_value(convert<C>(x[i])));
}
// forward was: y = 1 / (1 + e^-x)
// so:          dy/dx = e^-x / (1 + e^-x)^2 = y * (1 - y)     since 1 - y = e^-x / (1 + e^-x)
template <class T>
void sigmoid_backward(const T* y, const T* dy, T* dx, int64_t n) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) {
    const C s = convert<C>(y[i]);
    accumulate(dx[i], convert<C>(dy[i]) * s * (C(1) - s));
  }
}

// ---------------------------------------------------------------- tanh
template <class T>
void tanh_forward(const T* x, T* y, int64_t n) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) y[i] = convert<T>(std::tanh(convert<C>(x[i])));
}
// forward was: y = tanh(x) = sinh(x) / cosh(x)
// so:          dy/dx = (cosh^2 - sinh^2) / cosh^2 = 1 - tanh^2(x) = 1 - y^2
template <class T>
void tanh_backward(const T* y, const T* dy, T* dx, int64_t n) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) {
    const C t = convert<C>(y[i]);
    accumulate(dx[i], convert<C>(dy[i]) * (C(1) - t * t));
  }
}

// ---------------------------------------------------------------- silu
template <class T>
void silu_forward(const T* x, T* y, int64_t n) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) {
    const C v = convert<C>(x[i]);
    y[i] = convert<T>(v * detail::sigmoid_value(v));
  }
}
// forward was: y = x * s, s = sigmoid(x)
// so:          dy/dx = s + x * s' = s + x * s * (1 - s) = s * (1 + x * (1 - s))
template <class T>
void silu_backward(const T* x, const T* dy, T* dx, int64_t n) {
  // exercise silu.backward: begin
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) {
    accumulate(dx[i], convert<C>(dy[i]) * detail::silu_derivative(convert<C>(x[i])));
  }
  // exercise silu.backward: end
}

// ---------------------------------------------------------------- silu, fast
// The same formulas on float and double, vectorised (ops/vectorize.h has the loop shapes and
// the vectorisable sigmoid) and split across threads by elements, which gives the same bits
// for any split; dx is written rather than added into zeros. They differ from the loops
// above only through fast_exp (within a couple of ulp of std::exp). swiglu uses the same
// sigmoid, so swiglu(x, x) == silu(x) * x holds on both paths.

template <class F>
[[gnu::noinline]] void silu_forward_span(const F* __restrict x, F* __restrict y, int64_t n) {
  detail::simd_for(n, [&](int64_t i) { y[i] = x[i] * detail::sigmoid_vectorizable(x[i]); });
}

template <class F>
[[gnu::noinline]] void silu_backward_span(const F* __restrict x, const F* __restrict dy,
                                          F* __restrict dx, int64_t n) {
  detail::simd_for(n, [&](int64_t i) {
    const F s = detail::sigmoid_vectorizable(x[i]);
    dx[i] = dy[i] * (s * (F(1) + x[i] * (F(1) - s)));
  });
}

// ---------------------------------------------------------------- gelu
// Phi(x) = 0.5 * (1 + erf(x / sqrt(2))) is the standard normal CDF and
// phi(x) = e^(-x^2 / 2) / sqrt(2 pi) its density (Phi' = phi).
constexpr double kSqrtHalf = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kCubic = 0.044715;                      // of the tanh approximation

template <class T>
void gelu_forward(const T* x, T* y, int64_t n, bool approximate) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) {
    const C v = convert<C>(x[i]);
    if (approximate) {
      const C u = C(kSqrt2OverPi) * (v + C(kCubic) * v * v * v);
      y[i] = convert<T>(C(0.5) * v * (C(1) + std::tanh(u)));
    } else {
      y[i] = convert<T>(C(0.5) * v * (C(1) + std::erf(v * C(kSqrtHalf))));
    }
  }
}
// exact:  forward was y = x * Phi(x), so dy/dx = Phi(x) + x * phi(x)   (product rule)
// tanh:   forward was y = 0.5 * x * (1 + t), t = tanh(u), u = sqrt(2/pi) * (x + 0.044715 x^3)
//         so dy/dx = 0.5 * (1 + t) + 0.5 * x * (1 - t^2) * du/dx,
//         du/dx = sqrt(2/pi) * (1 + 3 * 0.044715 * x^2)
template <class T>
void gelu_backward(const T* x, const T* dy, T* dx, int64_t n, bool approximate) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < n; ++i) {
    const C v = convert<C>(x[i]);
    C d;
    if (approximate) {
      const C t = std::tanh(C(kSqrt2OverPi) * (v + C(kCubic) * v * v * v));
      const C du = C(kSqrt2OverPi) * (C(1) + C(3 * kCubic) * v * v);
      d = C(0.5) * (C(1) + t) + C(0.5) * v * (C(1) - t * t) * du;
    } else {
      const C cdf = C(0.5) * (C(1) + std::erf(v * C(kSqrtHalf)));
      const C pdf = C(kInvSqrt2Pi) * std::exp(C(-0.5) * v * v);
      d = cdf + v * pdf;
    }
    accumulate(dx[i], convert<C>(dy[i]) * d);
  }
}

// ---------------------------------------------------------------- running a kernel
// Calls kernel(T* in, T* out, n) on a contiguous copy of x (a view when x already is one),
// for x's stored type T. Returns out, contiguous, with x's shape and dtype.
template <class Kernel>
Tensor run_forward(const Tensor& x, Kernel kernel) {
  const Tensor xc = x.contiguous();
  Tensor y = empty(x.shape(), x.dtype());
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<ComputeType<T>> && !std::is_same_v<T, int64_t> &&
                  !std::is_same_v<T, bool>) {
      kernel(xc.data<T>(), y.data<T>(), xc.numel());
    }
  });
  return y;
}

// Calls kernel(saved, dout, dx, n) with dx zero-filled; `saved` (x or y) is contiguous.
template <class Kernel>
Tensor run_backward(const Tensor& saved, const Tensor& dout, Kernel kernel) {
  const Tensor dc = dout.contiguous();
  Tensor dx = zeros(saved.shape(), saved.dtype());
  visit_dtype(saved.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
      kernel(saved.data<T>(), dc.data<T>(), dx.data<T>(), saved.numel());
    }
  });
  return dx;
}

// Whether the fast kernels run: float32/float64, unless the reference kernels are on.
bool fast_path(DType dtype) {
  return (dtype == kFloat32 || dtype == kFloat64) && !reference_kernels();
}

constexpr int64_t kGrain = 16384;  // elements per thread piece: ~10 us of the cheapest kernel

// The fast counterparts of run_forward/run_backward: span(in, out, n) or
// span(saved, dout, dx, n) on contiguous pieces of the elements, one piece per thread.
// Elements are independent, so any split gives the same bits.
template <class Span>
Tensor run_fast_forward(const Tensor& x, Span span) {
  const Tensor xc = x.contiguous();
  Tensor y = empty(x.shape(), x.dtype());
  visit_dtype(x.dtype(), [&]<class F>() {
    if constexpr (std::is_floating_point_v<F>) {
      const F* in = xc.data<F>();
      F* out = y.data<F>();
      parallel_for(xc.numel(), kGrain,
                   [&](int64_t i0, int64_t i1) { span(in + i0, out + i0, i1 - i0); });
    }
  });
  return y;
}
template <class Span>
Tensor run_fast_backward(const Tensor& saved, const Tensor& dout, Span span) {
  const Tensor dc = dout.contiguous();
  Tensor dx = empty(saved.shape(), saved.dtype());  // every element is written
  visit_dtype(saved.dtype(), [&]<class F>() {
    if constexpr (std::is_floating_point_v<F>) {
      const F *sp = saved.data<F>(), *dy = dc.data<F>();
      F* d = dx.data<F>();
      parallel_for(saved.numel(), kGrain,
                   [&](int64_t i0, int64_t i1) { span(sp + i0, dy + i0, d + i0, i1 - i0); });
    }
  });
  return dx;
}

// ---------------------------------------------------------------- the Functions

struct Relu : Function<Relu> {
  static constexpr std::string_view kName = "relu";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "relu");
    Tensor y = fast_path(x.dtype())
                   ? run_fast_forward(x, [](const auto* in, auto* out,
                                            int64_t n) { relu_forward_span(in, out, n); })
                   : run_forward(
                         x, [](const auto* in, auto* out, int64_t n) { relu_forward(in, out, n); });
    ctx.save_for_backward(y);  // the mask y > 0 is all backward needs
    return y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor y = ctx.saved_tensors()[0];
    if (fast_path(y.dtype())) {
      return {run_fast_backward(y, g[0], [](const auto* yp, const auto* dy, auto* dx, int64_t n) {
        relu_backward_span(yp, dy, dx, n);
      })};
    }
    return {run_backward(y, g[0], [](const auto* yp, const auto* dy, auto* dx, int64_t n) {
      relu_backward(yp, dy, dx, n);
    })};
  }
};

struct Sigmoid : Function<Sigmoid> {
  static constexpr std::string_view kName = "sigmoid";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "sigmoid");
    Tensor y =
        run_forward(x, [](const auto* in, auto* out, int64_t n) { sigmoid_forward(in, out, n); });
    ctx.save_for_backward(y);  // dy/dx = y * (1 - y)
    return y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    return {run_backward(ctx.saved_tensors()[0], g[0],
                         [](const auto* y, const auto* dy, auto* dx, int64_t n) {
                           sigmoid_backward(y, dy, dx, n);
                         })};
  }
};

struct Tanh : Function<Tanh> {
  static constexpr std::string_view kName = "tanh";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "tanh");
    Tensor y =
        run_forward(x, [](const auto* in, auto* out, int64_t n) { tanh_forward(in, out, n); });
    ctx.save_for_backward(y);  // dy/dx = 1 - y^2
    return y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    return {run_backward(
        ctx.saved_tensors()[0], g[0],
        [](const auto* y, const auto* dy, auto* dx, int64_t n) { tanh_backward(y, dy, dx, n); })};
  }
};

struct Silu : Function<Silu> {
  static constexpr std::string_view kName = "silu";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "silu");
    const Tensor xc = x.contiguous();
    ctx.save_for_backward(xc);  // dy/dx needs x itself (sigmoid(x) is recomputed)
    if (fast_path(x.dtype())) {
      return run_fast_forward(
          xc, [](const auto* in, auto* out, int64_t n) { silu_forward_span(in, out, n); });
    }
    return run_forward(xc, [](const auto* in, auto* out, int64_t n) { silu_forward(in, out, n); });
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    if (fast_path(x.dtype())) {
      return {run_fast_backward(x, g[0], [](const auto* xp, const auto* dy, auto* dx, int64_t n) {
        silu_backward_span(xp, dy, dx, n);
      })};
    }
    return {run_backward(x, g[0], [](const auto* xp, const auto* dy, auto* dx, int64_t n) {
      silu_backward(xp, dy, dx, n);
    })};
  }
};

struct Gelu : Function<Gelu> {
  static constexpr std::string_view kName = "gelu";
  struct State {
    bool approximate = false;
  };
  static Tensor forward(Context<State>& ctx, const Tensor& x, bool approximate) {
    detail::check_floating(x, "gelu");
    const Tensor xc = x.contiguous();
    ctx.state.approximate = approximate;
    ctx.save_for_backward(xc);  // dy/dx = Phi(x) + x * phi(x) needs x
    return run_forward(xc, [approximate](const auto* in, auto* out, int64_t n) {
      gelu_forward(in, out, n, approximate);
    });
  }
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const bool approximate = ctx.state.approximate;
    return {run_backward(ctx.saved_tensors()[0], g[0],
                         [approximate](const auto* x, const auto* dy, auto* dx, int64_t n) {
                           gelu_backward(x, dy, dx, n, approximate);
                         })};
  }
};

}  // namespace

Tensor relu(const Tensor& x, Here here) { return Relu::apply_at(here, x); }
Tensor sigmoid(const Tensor& x, Here here) { return Sigmoid::apply_at(here, x); }
Tensor tanh(const Tensor& x, Here here) { return Tanh::apply_at(here, x); }
Tensor silu(const Tensor& x, Here here) { return Silu::apply_at(here, x); }
Tensor gelu(const Tensor& x, bool approximate, Here here) {
  return Gelu::apply_at(here, x, approximate);
}

}  // namespace tg
