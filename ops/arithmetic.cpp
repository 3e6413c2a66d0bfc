// ops/arithmetic.cpp — add, sub, mul, div, neg with broadcasting, and their scalar forms.
// Tests: tests/ops/arithmetic_test.cpp. Course: docs/course/02-autograd.md.
//
// Broadcasting in the forward means summing in the backward: if a was stretched from
// shape (n) to (m, n), each a_j was used m times, so dL/da_j adds up the m gradients
// that reached its copies — sum_to(grad, a.shape()) (core/broadcast.h).
//
// A scalar operand s is a constant of the op (kept in its State), not an input: the op
// has one tensor input x and its backward returns one slot. It is converted to the
// compute type once (float for float32/float16/bfloat16), as PyTorch does.
#include "ops/arithmetic.h"

#include "ops/elementwise.h"

namespace tg {
namespace {

void check_binary(const Tensor& a, const Tensor& b, const char* op) {
  detail::check_floating(a, op);
  detail::check_floating(b, op);
  detail::check_same_dtype(a, b, op);
}

// Raw (non-recording) kernels the backwards below are built from.
Tensor times(const Tensor& x, const Tensor& y) {
  return detail::binary_map(x, y, "mul", [](auto u, auto v) { return u * v; });
}
Tensor negated(const Tensor& x) {
  return detail::unary_map(x, [](auto v) { return -v; });
}

// ---------------------------------------------------------------- tensor op tensor

struct Add : Function<Add> {
  static constexpr std::string_view kName = "add";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  struct State {
    Shape a_shape, b_shape;
  };
  // forward: out = a + b
  static Tensor forward(Context<State>& ctx, const Tensor& a, const Tensor& b) {
    check_binary(a, b, "add");
    ctx.state = {a.shape(), b.shape()};
    return detail::binary_map(a, b, "add", [](auto u, auto v) { return u + v; });
  }
  // backward: d(out)/da = d(out)/db = 1, so da = sum_to(dout), db = sum_to(dout)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    return {ctx.needs_input_grad(0) ? sum_to(g[0], ctx.state.a_shape) : Tensor(),
            ctx.needs_input_grad(1) ? sum_to(g[0], ctx.state.b_shape) : Tensor()};
  }
};

struct Sub : Function<Sub> {
  static constexpr std::string_view kName = "sub";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  struct State {
    Shape a_shape, b_shape;
  };
  // forward: out = a - b
  static Tensor forward(Context<State>& ctx, const Tensor& a, const Tensor& b) {
    check_binary(a, b, "sub");
    ctx.state = {a.shape(), b.shape()};
    return detail::binary_map(a, b, "sub", [](auto u, auto v) { return u - v; });
  }
  // backward: d(out)/da = 1 and d(out)/db = -1, so da = sum_to(dout), db = -sum_to(dout)
  // (negating after the sum touches b's elements only, not every broadcast copy)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    return {ctx.needs_input_grad(0) ? sum_to(g[0], ctx.state.a_shape) : Tensor(),
            ctx.needs_input_grad(1) ? negated(sum_to(g[0], ctx.state.b_shape)) : Tensor()};
  }
};

struct Mul : Function<Mul> {
  static constexpr std::string_view kName = "mul";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  // forward: out = a * b
  static Tensor forward(Context<>& ctx, const Tensor& a, const Tensor& b) {
    check_binary(a, b, "mul");
    ctx.save_for_backward(a, b);
    return detail::binary_map(a, b, "mul", [](auto u, auto v) { return u * v; });
  }
  // backward: d(out)/da = b and d(out)/db = a, so da = sum_to(dout * b), db = sum_to(dout * a)
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &a = saved[0], &b = saved[1];
    return {ctx.needs_input_grad(0) ? sum_to(times(g[0], b), a.shape()) : Tensor(),
            ctx.needs_input_grad(1) ? sum_to(times(g[0], a), b.shape()) : Tensor()};
  }
};

struct Div : Function<Div> {
  static constexpr std::string_view kName = "div";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  struct State {
    Shape a_shape;
  };
  // forward: out = a / b
  static Tensor forward(Context<State>& ctx, const Tensor& a, const Tensor& b) {
    check_binary(a, b, "div");
    Tensor out = detail::binary_map(a, b, "div", [](auto u, auto v) { return u / v; });
    ctx.state = {a.shape()};
    ctx.save_for_backward(b);
    if (ctx.needs_input_grad(1)) ctx.save_for_backward(out);  // only db needs it
    return out;
  }
  // backward: d(out)/da = 1 / b
  //           d(out)/db = -a / b^2 = -(1 / b) * (a / b) = -(1 / b) * out
  // so with q = dout / b:  da = sum_to(q),  db = sum_to(-q * out)
  // (saving out instead of a lets db reuse q: two passes instead of three)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor& b = saved[0];
    const Tensor q = detail::binary_map(g[0], b, "div", [](auto d, auto v) { return d / v; });
    Tensor db;
    if (ctx.needs_input_grad(1)) {
      const Tensor& out = saved[1];
      db = sum_to(detail::binary_map(q, out, "div", [](auto u, auto o) { return -u * o; }),
                  b.shape());
    }
    return {ctx.needs_input_grad(0) ? sum_to(q, ctx.state.a_shape) : Tensor(), db};
  }
};

struct Neg : Function<Neg> {
  static constexpr std::string_view kName = "neg";
  // forward: out = -x
  static Tensor forward(Context<>&, const Tensor& x) {
    detail::check_floating(x, "neg");
    return negated(x);
  }
  // backward: d(out)/dx = -1, so dx = -dout
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) {
    return {negated(g[0])};
  }
};

// ---------------------------------------------------------------- tensor op scalar
// s reaches the kernels as static_cast<decltype(v)>(s): the element's compute type. The ops
// whose backward needs s keep it in their State.

struct Scalar {
  double s = 0;
};

struct AddScalar : Function<AddScalar> {
  static constexpr std::string_view kName = "add_scalar";
  // forward: out = x + s
  static Tensor forward(Context<>&, const Tensor& x, double s) {
    detail::check_floating(x, "add");
    return detail::unary_map(x, [s](auto v) { return v + static_cast<decltype(v)>(s); });
  }
  // backward: d(out)/dx = 1, so dx = dout
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) { return {g[0]}; }
};

struct SubScalar : Function<SubScalar> {
  static constexpr std::string_view kName = "sub_scalar";
  // forward: out = x - s
  static Tensor forward(Context<>&, const Tensor& x, double s) {
    detail::check_floating(x, "sub");
    return detail::unary_map(x, [s](auto v) { return v - static_cast<decltype(v)>(s); });
  }
  // backward: d(out)/dx = 1, so dx = dout
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) { return {g[0]}; }
};

struct RSubScalar : Function<RSubScalar> {
  static constexpr std::string_view kName = "rsub_scalar";
  // forward: out = s - x
  static Tensor forward(Context<>&, double s, const Tensor& x) {
    detail::check_floating(x, "sub");
    return detail::unary_map(x, [s](auto v) { return static_cast<decltype(v)>(s) - v; });
  }
  // backward: d(out)/dx = -1, so dx = -dout
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) {
    return {negated(g[0])};
  }
};

struct MulScalar : Function<MulScalar> {
  static constexpr std::string_view kName = "mul_scalar";
  using State = Scalar;
  // forward: out = x * s
  static Tensor forward(Context<State>& ctx, const Tensor& x, double s) {
    detail::check_floating(x, "mul");
    ctx.state.s = s;
    return detail::unary_map(x, [s](auto v) { return v * static_cast<decltype(v)>(s); });
  }
  // backward: d(out)/dx = s, so dx = dout * s
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const double s = ctx.state.s;
    return {detail::unary_map(g[0], [s](auto d) { return d * static_cast<decltype(d)>(s); })};
  }
};

struct DivScalar : Function<DivScalar> {
  static constexpr std::string_view kName = "div_scalar";
  using State = Scalar;
  // forward: out = x / s
  static Tensor forward(Context<State>& ctx, const Tensor& x, double s) {
    detail::check_floating(x, "div");
    ctx.state.s = s;
    return detail::unary_map(x, [s](auto v) { return v / static_cast<decltype(v)>(s); });
  }
  // backward: d(out)/dx = 1 / s, so dx = dout / s
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const double s = ctx.state.s;
    return {detail::unary_map(g[0], [s](auto d) { return d / static_cast<decltype(d)>(s); })};
  }
};

struct RDivScalar : Function<RDivScalar> {
  static constexpr std::string_view kName = "rdiv_scalar";
  using State = Scalar;
  // forward: out = s / x
  static Tensor forward(Context<State>& ctx, double s, const Tensor& x) {
    detail::check_floating(x, "div");
    ctx.state.s = s;
    ctx.save_for_backward(x);
    return detail::unary_map(x, [s](auto v) { return static_cast<decltype(v)>(s) / v; });
  }
  // backward: d(out)/dx = d(s * x^-1)/dx = -s * x^-2, so dx = -(dout * s) / (x * x)
  // (at x = 0 that is -inf * sign(dout * s), and nan when s = 0, as in PyTorch)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const double s = ctx.state.s;
    return {detail::binary_map(g[0], x, "div", [s](auto d, auto v) {
      return -(d * static_cast<decltype(d)>(s)) / (v * v);
    })};
  }
};

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, Here here) { return Add::apply_at(here, a, b); }
Tensor sub(const Tensor& a, const Tensor& b, Here here) { return Sub::apply_at(here, a, b); }
Tensor mul(const Tensor& a, const Tensor& b, Here here) { return Mul::apply_at(here, a, b); }
Tensor div(const Tensor& a, const Tensor& b, Here here) { return Div::apply_at(here, a, b); }
Tensor neg(const Tensor& x, Here here) { return Neg::apply_at(here, x); }

Tensor add(const Tensor& x, double s, Here here) { return AddScalar::apply_at(here, x, s); }
Tensor sub(const Tensor& x, double s, Here here) { return SubScalar::apply_at(here, x, s); }
Tensor sub(double s, const Tensor& x, Here here) { return RSubScalar::apply_at(here, s, x); }
Tensor mul(const Tensor& x, double s, Here here) { return MulScalar::apply_at(here, x, s); }
Tensor div(const Tensor& x, double s, Here here) { return DivScalar::apply_at(here, x, s); }
Tensor div(double s, const Tensor& x, Here here) { return RDivScalar::apply_at(here, s, x); }

}  // namespace tg
