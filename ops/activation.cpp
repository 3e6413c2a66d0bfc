// ops/activation.cpp — relu, sigmoid, tanh, silu, gelu: the reference kernels forward and
// backward, then the Functions that record them.
// Tests: tests/ops/activation_test.cpp. Course: docs/course/05-activations.md.
//
// Every op here is elementwise: any shape, n elements. The math, forward and the
// derivative its backward multiplies dout by:
//   relu:     y = max(x, 0)                 dy/dx = 1 if y > 0 else 0     (from y)
//   sigmoid:  y = 1 / (1 + e^-x)            dy/dx = y * (1 - y)           (from y)
//   tanh:     y = tanh(x)                   dy/dx = 1 - y^2               (from y)
//   silu:     y = x * s, s = sigmoid(x)     dy/dx = s * (1 + x * (1 - s)) (from x)
//   gelu:     y = x * Phi(x)                dy/dx = Phi(x) + x * phi(x)   (from x)
// Where the derivative is a function of y alone, the forward saves y (no need to keep x or
// to recompute e^-x); silu and gelu need x itself, so they save x.
//
// The kernels take n contiguous elements in the compute type F (double for float64, float
// otherwise) and follow the write rule of ops/kernels.h. relu and silu also have fast
// kernels (ops/fast/activation.cpp), chosen by the switch of ops/kernels.h.
#include "ops/activation.h"

#include <cmath>

#include "ops/compute.h"
#include "ops/elementwise.h"

namespace tg {
namespace {

using kernels::GradOut;
using kernels::zero_unless_adding;

// ---------------------------------------------------------------- relu
template <class F>
void relu_forward(const F* x, F* y, int64_t n) {
  // exercise relu.forward_backward: begin
  for (int64_t i = 0; i < n; ++i) {
    y[i] = x[i] < F(0) ? F(0) : x[i];  // not max(x, 0): nan must stay nan, as in PyTorch
  }
  // exercise relu.forward_backward: end
}
// The mask is read from y, not x: relu'(x) = 1 where y > 0 and 0 where y <= 0 — including
// x = 0, where the kink is: relu'(0) = 0 (PyTorch's choice).
template <class F>
void relu_backward(const F* y, const F* dy, GradOut<F> dx, int64_t n) {
  zero_unless_adding(dx, n);
  // exercise relu.forward_backward: begin
  for (int64_t i = 0; i < n; ++i) {
    if (!(y[i] <= F(0))) dx[i] += dy[i];  // nan passes
  }
  // exercise relu.forward_backward: end
}

// ---------------------------------------------------------------- sigmoid
template <class F>
void sigmoid_forward(const F* x, F* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = detail::sigmoid_value(x[i]);
}
// forward was: y = 1 / (1 + e^-x)
// so:          dy/dx = e^-x / (1 + e^-x)^2 = y * (1 - y)     since 1 - y = e^-x / (1 + e^-x)
template <class F>
void sigmoid_backward(const F* y, const F* dy, GradOut<F> dx, int64_t n) {
  zero_unless_adding(dx, n);
  for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * y[i] * (F(1) - y[i]);
}

// ---------------------------------------------------------------- tanh
template <class F>
void tanh_forward(const F* x, F* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}
// forward was: y = tanh(x) = sinh(x) / cosh(x)
// so:          dy/dx = (cosh^2 - sinh^2) / cosh^2 = 1 - tanh^2(x) = 1 - y^2
template <class F>
void tanh_backward(const F* y, const F* dy, GradOut<F> dx, int64_t n) {
  zero_unless_adding(dx, n);
  for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * (F(1) - y[i] * y[i]);
}

// ---------------------------------------------------------------- silu
template <class F>
void silu_forward(const F* x, F* y, int64_t n) {
  // exercise silu.forward_backward: begin
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * detail::sigmoid_value(x[i]);
  // exercise silu.forward_backward: end
}
// The derivative is in the table at the top: the product rule on x * sigmoid(x).
template <class F>
void silu_backward(const F* x, const F* dy, GradOut<F> dx, int64_t n) {
  zero_unless_adding(dx, n);
  // exercise silu.forward_backward: begin
  for (int64_t i = 0; i < n; ++i) {
    const F s = detail::sigmoid_value(x[i]);
    dx[i] += dy[i] * s * (F(1) + x[i] * (F(1) - s));
  }
  // exercise silu.forward_backward: end
}

// ---------------------------------------------------------------- gelu
// Phi(x) = 0.5 * (1 + erf(x / sqrt(2))) is the standard normal CDF and
// phi(x) = e^(-x^2 / 2) / sqrt(2 pi) its density (Phi' = phi).
constexpr double kSqrtHalf = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kCubic = 0.044715;                      // of the tanh approximation

template <class F>
void gelu_forward(const F* x, F* y, int64_t n, bool approximate) {
  for (int64_t i = 0; i < n; ++i) {
    const F v = x[i];
    if (approximate) {
      const F u = F(kSqrt2OverPi) * (v + F(kCubic) * v * v * v);
      y[i] = F(0.5) * v * (F(1) + std::tanh(u));
    } else {
      y[i] = F(0.5) * v * (F(1) + std::erf(v * F(kSqrtHalf)));
    }
  }
}
// exact:  forward was y = x * Phi(x), so dy/dx = Phi(x) + x * phi(x)   (product rule)
// tanh:   forward was y = 0.5 * x * (1 + t), t = tanh(u), u = sqrt(2/pi) * (x + 0.044715 x^3)
//         so dy/dx = 0.5 * (1 + t) + 0.5 * x * (1 - t^2) * du/dx,
//         du/dx = sqrt(2/pi) * (1 + 3 * 0.044715 * x^2)
template <class F>
void gelu_backward(const F* x, const F* dy, GradOut<F> dx, int64_t n, bool approximate) {
  zero_unless_adding(dx, n);
  for (int64_t i = 0; i < n; ++i) {
    const F v = x[i];
    F d;
    if (approximate) {
      const F t = std::tanh(F(kSqrt2OverPi) * (v + F(kCubic) * v * v * v));
      const F du = F(kSqrt2OverPi) * (F(1) + F(3 * kCubic) * v * v);
      d = F(0.5) * (F(1) + t) + F(0.5) * v * (F(1) - t * t) * du;
    } else {
      const F cdf = F(0.5) * (F(1) + std::erf(v * F(kSqrtHalf)));
      const F pdf = F(kInvSqrt2Pi) * std::exp(F(-0.5) * v * v);
      d = cdf + v * pdf;
    }
    dx[i] += dy[i] * d;
  }
}

// ---------------------------------------------------------------- running a kernel
// kernel_for.template operator()<F>() gives the kernel to run for compute type F: a pair's
// choice (kernels::relu_forward.get<F>()) or a plain kernel.

/// y = kernel(x) in the compute type; y has x's shape and dtype.
template <class KernelFor>
Tensor run_forward(const Tensor& x, KernelFor kernel_for) {
  const DType ct = detail::compute_type(x.dtype());
  const Tensor xc = detail::as_compute(x, ct);
  Tensor y = empty(x.shape(), ct);
  detail::visit_compute(ct, [&]<class F>() {
    kernel_for.template operator()<F>()(xc.data<F>(), y.data<F>(), xc.numel());
  });
  return detail::round_to(y, x.dtype());
}

/// dx = kernel(saved, dout) for input 0, into the buffer Context::grad_buffer gives.
template <class State, class KernelFor>
Tensor run_backward(const Context<State>& ctx, const Tensor& saved, const Tensor& dout,
                    KernelFor kernel_for) {
  const DType ct = detail::compute_type(saved.dtype());
  const Tensor sc = detail::as_compute(saved, ct), gc = detail::as_compute(dout, ct);
  const GradBuffer dx = ctx.grad_buffer(0, saved.shape(), ct);
  if (!dx.tensor.defined()) return {};
  detail::visit_compute(ct, [&]<class F>() {
    kernel_for.template operator()<F>()(sc.data<F>(), gc.data<F>(), detail::grad_out<F>(dx),
                                        sc.numel());
  });
  return detail::finish_grad(dx, saved.dtype());
}

// ---------------------------------------------------------------- the Functions

struct Relu : Function<Relu> {
  static constexpr std::string_view kName = "relu";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "relu");
    Tensor y = run_forward(x, []<class F>() { return kernels::relu_forward.get<F>(); });
    ctx.save_for_backward(y);  // the mask y > 0 is all backward needs
    return y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    return {run_backward(ctx, ctx.saved_tensors()[0], g[0],
                         []<class F>() { return kernels::relu_backward.get<F>(); })};
  }
};

struct Sigmoid : Function<Sigmoid> {
  static constexpr std::string_view kName = "sigmoid";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "sigmoid");
    Tensor y = run_forward(x, []<class F>() { return &sigmoid_forward<F>; });
    ctx.save_for_backward(y);  // dy/dx = y * (1 - y)
    return y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    return {run_backward(ctx, ctx.saved_tensors()[0], g[0],
                         []<class F>() { return &sigmoid_backward<F>; })};
  }
};

struct Tanh : Function<Tanh> {
  static constexpr std::string_view kName = "tanh";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "tanh");
    Tensor y = run_forward(x, []<class F>() { return &tanh_forward<F>; });
    ctx.save_for_backward(y);  // dy/dx = 1 - y^2
    return y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    return {run_backward(ctx, ctx.saved_tensors()[0], g[0],
                         []<class F>() { return &tanh_backward<F>; })};
  }
};

struct Silu : Function<Silu> {
  static constexpr std::string_view kName = "silu";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "silu");
    ctx.save_for_backward(x);  // dy/dx needs x itself (sigmoid(x) is recomputed)
    return run_forward(x, []<class F>() { return kernels::silu_forward.get<F>(); });
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    return {run_backward(ctx, ctx.saved_tensors()[0], g[0],
                         []<class F>() { return kernels::silu_backward.get<F>(); })};
  }
};

struct Gelu : Function<Gelu> {
  static constexpr std::string_view kName = "gelu";
  struct State {
    bool approximate = false;
  };
  static Tensor forward(Context<State>& ctx, const Tensor& x, bool approximate) {
    detail::check_floating(x, "gelu");
    ctx.state.approximate = approximate;
    ctx.save_for_backward(x);  // dy/dx = Phi(x) + x * phi(x) needs x
    return run_forward(x, [approximate]<class F>() {
      return
          [approximate](const F* in, F* out, int64_t n) { gelu_forward(in, out, n, approximate); };
    });
  }
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const bool approximate = ctx.state.approximate;
    return {run_backward(ctx, ctx.saved_tensors()[0], g[0], [approximate]<class F>() {
      return [approximate](const F* x, const F* dy, GradOut<F> dx, int64_t n) {
        gelu_backward(x, dy, dx, n, approximate);
      };
    })};
  }
};

}  // namespace

// The reference halves of the kernel pairs (ops/kernels.h); ops/fast/activation.cpp adds
// the fast ones.
constinit kernels::KernelPair<kernels::ActivationForward, float, double> kernels::relu_forward{
    tg::relu_forward<float>, tg::relu_forward<double>};
constinit kernels::KernelPair<kernels::ActivationBackward, float, double> kernels::relu_backward{
    tg::relu_backward<float>, tg::relu_backward<double>};
constinit kernels::KernelPair<kernels::ActivationForward, float, double> kernels::silu_forward{
    tg::silu_forward<float>, tg::silu_forward<double>};
constinit kernels::KernelPair<kernels::ActivationBackward, float, double> kernels::silu_backward{
    tg::silu_backward<float>, tg::silu_backward<double>};

Tensor relu(const Tensor& x, Here here) { return Relu::apply_at(here, x); }
Tensor sigmoid(const Tensor& x, Here here) { return Sigmoid::apply_at(here, x); }
Tensor tanh(const Tensor& x, Here here) { return Tanh::apply_at(here, x); }
Tensor silu(const Tensor& x, Here here) { return Silu::apply_at(here, x); }
Tensor gelu(const Tensor& x, bool approximate, Here here) {
  return Gelu::apply_at(here, x, approximate);
}

}  // namespace tg
