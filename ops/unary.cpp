// ops/unary.cpp — pow, exp, log, sqrt, rsqrt, abs, clamp.
// Tests: tests/ops/unary_test.cpp.
// Course: docs/course/02-autograd.md (the primitives the composed twins use).
//
// Every op here is out_i = f(x_i), so its Jacobian is diagonal and the backward is
// dx_i = dout_i * f'(x_i). Each op saves whichever of x and out makes f' cheapest: exp and
// sqrt can write f' in terms of out (no second exp or sqrt), the others need x.
//
// In the kernels `v`, `o` and `d` are one element of x, out and dout in the compute type
// (double or float); constants are converted to that type with static_cast<V>.
#include "ops/unary.h"

#include <cmath>
#include <limits>

#include "ops/elementwise.h"

namespace tg {
namespace {

struct Pow : Function<Pow> {
  static constexpr std::string_view kName = "pow";
  struct State {
    double p = 0;
  };
  // forward: out = x^p
  static Tensor forward(Context<State>& ctx, const Tensor& x, double p) {
    detail::check_floating(x, "pow");
    ctx.state.p = p;
    if (p != 0) ctx.save_for_backward(x);
    return detail::unary_map(x, [p](auto v) {
      using V = decltype(v);
      return std::pow(v, static_cast<V>(p));
    });
  }
  // backward: d(x^p)/dx = p * x^(p-1), so dx = dout * (p * x^(p-1)).
  // p = 0: out = 1 is constant, so dx = 0 exactly, even at x = 0 where the formula would
  // give 0 * 0^-1 = nan, and even for a nan or inf dout (PyTorch returns zeros here too).
  // At x = 0 otherwise, IEEE's 0^(p-1) gives the one-sided limits: +inf for 0 < p < 1
  // (the tangent of sqrt at 0 is vertical), -inf for p < 0, 1 for p = 1, 0 for p > 1.
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const double p = ctx.state.p;
    if (p == 0) return {zeros(g[0].shape(), g[0].dtype())};
    const Tensor x = ctx.saved_tensors()[0];
    return {detail::binary_map(g[0], x, "pow", [p](auto d, auto v) {
      using V = decltype(v);
      const V pv = static_cast<V>(p);
      return d * (pv * std::pow(v, pv - V(1)));
    })};
  }
};

struct Exp : Function<Exp> {
  static constexpr std::string_view kName = "exp";
  // forward: out = e^x
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "exp");
    Tensor out = detail::unary_map(x, [](auto v) { return std::exp(v); });
    ctx.save_for_backward(out);
    return out;
  }
  // backward: d(e^x)/dx = e^x = out, so dx = dout * out
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor out = ctx.saved_tensors()[0];
    return {detail::binary_map(g[0], out, "exp", [](auto d, auto o) { return d * o; })};
  }
};

struct Log : Function<Log> {
  static constexpr std::string_view kName = "log";
  // forward: out = ln(x)
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "log");
    ctx.save_for_backward(x);
    return detail::unary_map(x, [](auto v) { return std::log(v); });
  }
  // backward: d(ln x)/dx = 1 / x, so dx = dout / x  (+inf at x = 0 for dout > 0)
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {detail::binary_map(g[0], x, "log", [](auto d, auto v) { return d / v; })};
  }
};

struct Sqrt : Function<Sqrt> {
  static constexpr std::string_view kName = "sqrt";
  // forward: out = sqrt(x)
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "sqrt");
    Tensor out = detail::unary_map(x, [](auto v) { return std::sqrt(v); });
    ctx.save_for_backward(out);
    return out;
  }
  // backward: d(x^(1/2))/dx = 1 / (2 x^(1/2)) = 1 / (2 out), so dx = dout / (2 out)
  // (+inf at x = 0 for dout > 0)
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor out = ctx.saved_tensors()[0];
    return {detail::binary_map(g[0], out, "sqrt", [](auto d, auto o) {
      using V = decltype(o);
      return d / (V(2) * o);
    })};
  }
};

struct Rsqrt : Function<Rsqrt> {
  static constexpr std::string_view kName = "rsqrt";
  // forward: out = x^(-1/2) = 1 / sqrt(x)
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "rsqrt");
    Tensor out = detail::unary_map(x, [](auto v) {
      using V = decltype(v);
      return V(1) / std::sqrt(v);
    });
    ctx.save_for_backward(out);
    return out;
  }
  // backward: d(x^(-1/2))/dx = -1/2 x^(-3/2) = -1/2 out^3, so dx = -0.5 * dout * out^3
  // (-inf at x = 0 for dout > 0)
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor out = ctx.saved_tensors()[0];
    return {detail::binary_map(g[0], out, "rsqrt", [](auto d, auto o) {
      using V = decltype(o);
      return V(-0.5) * d * (o * o * o);
    })};
  }
};

struct Abs : Function<Abs> {
  static constexpr std::string_view kName = "abs";
  // forward: out = |x|
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "abs");
    ctx.save_for_backward(x);
    return detail::unary_map(x, [](auto v) { return std::abs(v); });
  }
  // backward: d|x|/dx = sign(x) (-1, or +1), so dx = dout * sign(x).
  // At the kink x = 0 any value in [-1, 1] is a subgradient; we take sign(0) = 0, as
  // PyTorch does (and sign(nan) = 0 too). A product, not a select, as in PyTorch: an inf
  // dout at x = 0 gives inf * 0 = nan.
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {detail::binary_map(g[0], x, "abs", [](auto d, auto v) {
      using V = decltype(v);
      const V sign = static_cast<V>((v > V(0)) - (v < V(0)));
      return d * sign;
    })};
  }
};

// The double `v` rounded to dtype's precision (what a bound becomes next to x's elements).
double round_to(double v, DType dtype) {
  return visit_dtype(dtype, [&]<class T>() -> double {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) return v;
    else return convert<double>(convert<T>(v));
  });
}

struct Clamp : Function<Clamp> {
  static constexpr std::string_view kName = "clamp";
  struct State {
    double lo = 0, hi = 0;
  };
  // forward: out = min(max(x, lo), hi), a missing bound being -inf (lo) or +inf (hi).
  // Written as `v < lo ? lo : v > hi ? hi : v`, so a nan x (both tests false) stays nan.
  static Tensor forward(Context<State>& ctx, const Tensor& x, std::optional<double> min,
                        std::optional<double> max) {
    detail::check_floating(x, "clamp");
    TG_CHECK(min || max, ValueError,
             "clamp: at least one of min and max must be given (both are std::nullopt)");
    TG_CHECK(!min || !std::isnan(*min), ValueError, "clamp: min is nan");
    TG_CHECK(!max || !std::isnan(*max), ValueError, "clamp: max is nan");
    TG_CHECK(!min || !max || *min <= *max, ValueError, "clamp: min ({}) is greater than max ({})",
             *min, *max);
    // Bounds are compared with x's elements after rounding to x's dtype, as PyTorch
    // does: a float32 x equal to float(0.1) counts as being at the bound 0.1.
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const double lo = round_to(min.value_or(-kInf), x.dtype());
    const double hi = round_to(max.value_or(kInf), x.dtype());
    ctx.state = {lo, hi};
    ctx.save_for_backward(x);
    return detail::unary_map(x, [lo, hi](auto v) {
      using V = decltype(v);
      const V l = static_cast<V>(lo), h = static_cast<V>(hi);
      return v < l ? l : (v > h ? h : v);
    });
  }
  // backward: d(out)/dx = 1 where lo < x < hi (out = x), 0 where x < lo or x > hi
  // (out is a constant). At the kinks x = lo and x = hi we take 1: the gradient passes
  // where lo <= x <= hi, bounds included, as PyTorch does. A select, not a product: a nan
  // or inf dout outside the bounds still gives exactly 0. nan x gives 0.
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const double lo = ctx.state.lo, hi = ctx.state.hi;
    return {detail::binary_map(g[0], x, "clamp", [lo, hi](auto d, auto v) {
      using V = decltype(v);
      return (v >= static_cast<V>(lo) && v <= static_cast<V>(hi)) ? d : V(0);
    })};
  }
};

}  // namespace

Tensor pow(const Tensor& x, double exponent, Here here) { return Pow::apply_at(here, x, exponent); }
Tensor exp(const Tensor& x, Here here) { return Exp::apply_at(here, x); }
Tensor log(const Tensor& x, Here here) { return Log::apply_at(here, x); }
Tensor sqrt(const Tensor& x, Here here) { return Sqrt::apply_at(here, x); }
Tensor rsqrt(const Tensor& x, Here here) { return Rsqrt::apply_at(here, x); }
Tensor abs(const Tensor& x, Here here) { return Abs::apply_at(here, x); }
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max, Here here) {
  return Clamp::apply_at(here, x, min, max);
}

}  // namespace tg
