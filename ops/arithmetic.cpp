// ops/arithmetic.cpp — add, sub, mul, div, neg with broadcasting.
//
// Broadcasting in the forward means summing in the backward: if a was stretched from
// shape (n) to (m, n), each a_j was used m times, so dL/da_j adds up the m gradients
// that reached its copies — sum_to(grad, a.shape()) (core/broadcast.h).
#include "ops/arithmetic.h"

#include "ops/elementwise.h"

namespace tg {
namespace {

void check_binary(const Tensor& a, const Tensor& b, const char* op) {
  detail::check_floating(a, op);
  detail::check_floating(b, op);
  detail::check_same_dtype(a, b, op);
}

struct Add : Function<Add> {
  static constexpr std::string_view kName = "add";
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

struct Mul : Function<Mul> {
  static constexpr std::string_view kName = "mul";
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
    auto times = [](const Tensor& x, const Tensor& y) {
      return detail::binary_map(x, y, "mul", [](auto u, auto v) { return u * v; });
    };
    return {ctx.needs_input_grad(0) ? sum_to(times(g[0], b), a.shape()) : Tensor(),
            ctx.needs_input_grad(1) ? sum_to(times(g[0], a), b.shape()) : Tensor()};
  }
};

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, Here here) { return Add::apply_at(here, a, b); }
Tensor mul(const Tensor& a, const Tensor& b, Here here) { return Mul::apply_at(here, a, b); }

}  // namespace tg
