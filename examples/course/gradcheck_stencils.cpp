// file: examples/course/gradcheck_stencils.cpp
// Chapter 3: how accurate is a finite difference? Differentiates f(x) = sqrt(x) at x = 1
// (exact answer 0.5) with three formulas and many step sizes, in float64 and float32.
// Then the same choices in tg::gradcheck, on a custom op y = x^3.
#include <fmt/format.h>

#include <cmath>

#include "core/core.h"

namespace {

// The three difference quotients, for any floating type T.
template <class T>
T forward_difference(T x, T h) {
  return (std::sqrt(x + h) - std::sqrt(x)) / h;
}
template <class T>
T central_difference(T x, T h) {
  return (std::sqrt(x + h) - std::sqrt(x - h)) / (2 * h);
}
template <class T>
T four_point(T x, T h) {
  const T f2 = std::sqrt(x + 2 * h), f1 = std::sqrt(x + h);
  const T b1 = std::sqrt(x - h), b2 = std::sqrt(x - 2 * h);
  return (-f2 + 8 * f1 - 8 * b1 + b2) / (12 * h);
}

// y = x^3 elementwise, with the right backward: dx = 3 x^2 dy. Both compute in double
// and hand back the input's dtype.
struct Cube : tg::Function<Cube> {
  static constexpr std::string_view kName = "cube";
  static tg::Tensor forward(tg::Context<>& ctx, const tg::Tensor& x) {
    ctx.save_for_backward(x);
    tg::Tensor y = x.to(tg::kFloat64);
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double v = y.data<double>()[i];
      y.data<double>()[i] = v * v * v;
    }
    return y.to(x.dtype());
  }
  static std::vector<tg::Tensor> backward(tg::Context<>& ctx, const std::vector<tg::Tensor>& g) {
    const tg::Tensor x = ctx.saved_tensors()[0].to(tg::kFloat64).contiguous();
    tg::Tensor dx = g[0].to(tg::kFloat64);
    for (int64_t i = 0; i < dx.numel(); ++i) {
      const double v = x.data<double>()[i];
      dx.data<double>()[i] *= 3 * v * v;
    }
    return {dx.to(ctx.saved_tensors()[0].dtype())};
  }
};

}  // namespace

int main() {
  const double exact = 0.5;
  fmt::print("error |numeric - exact| of d sqrt(x)/dx at x = 1\n\n");
  fmt::print("    eps | forward f64 | central f64 | 4-point f64 | central f32\n");
  double ten_to_k = 1;
  for (int k = 1; k <= 12; ++k) {
    ten_to_k *= 10;                 // exact: powers of ten up to 1e22 are doubles
    const double h = 1 / ten_to_k;  // the double nearest to 10^-k
    const auto hf = static_cast<float>(h);
    fmt::print("  1e-{:02} |   {:9.1e} |   {:9.1e} |   {:9.1e} |   {:9.1e}\n", k,
               std::abs(forward_difference(1.0, h) - exact),
               std::abs(central_difference(1.0, h) - exact), std::abs(four_point(1.0, h) - exact),
               std::abs(static_cast<double>(central_difference(1.0f, hf)) - exact));
  }

  // tg::gradcheck makes the same choices through GradcheckOptions. For x^3 the central
  // difference is off by exactly eps^2 (times the upstream gradient); with eps = 0.01
  // that exceeds the tolerance, and the 4-point stencil, exact for cubics, passes.
  const auto fn = [](const std::vector<tg::Tensor>& in) { return Cube::apply(in[0]); };
  const tg::Tensor x = tg::full({1}, 0.1, tg::kFloat64).requires_grad_();
  tg::GradcheckOptions options;
  options.eps = 1e-2;
  fmt::print("\ncentral, eps 1e-2: {}\n", tg::gradcheck(fn, {x}, options).message);
  options.four_point = true;
  fmt::print("4-point, eps 1e-2: {}\n", tg::gradcheck(fn, {x}, options).ok ? "ok" : "failed");

  // A float32 input is not perturbed itself (the table shows why): gradcheck runs the
  // function on a float64 copy, then compares the input's own float32 backward with the
  // float64 one, at a float32 tolerance.
  const tg::GradcheckResult r32 = tg::gradcheck(fn, {tg::full({3}, 0.1).requires_grad_()});
  fmt::print("\nfloat32 input: {}, {} elements checked through a float64 copy\n",
             r32.ok ? "ok" : r32.message, r32.checked);
}
