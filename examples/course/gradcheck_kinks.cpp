// file: examples/course/gradcheck_kinks.cpp
// Chapter 3: gradcheck near a kink. relu(x) = max(x, 0) has no derivative at 0; like
// PyTorch, its backward uses slope 0 there. A finite difference that straddles the kink
// measures something else, and gradcheck reports it.
#include <fmt/format.h>

#include "core/core.h"

namespace {

// relu, or |x| when kAbs; the backward picks the sub-gradient 0 at x = 0 for both.
template <bool kAbs>
struct Kinked : tg::Function<Kinked<kAbs>> {
  static constexpr std::string_view kName = kAbs ? "abs" : "relu";
  static tg::Tensor forward(tg::Context<>& ctx, const tg::Tensor& x) {
    ctx.save_for_backward(x);
    tg::Tensor y = x.to(tg::kFloat64);
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double v = y.data<double>()[i];
      y.data<double>()[i] = v > 0 ? v : (kAbs ? -v : 0.0);
    }
    return y;
  }
  // relu: dx = dy * (x > 0);  abs: dx = dy * sign(x), with sign(0) = 0
  static std::vector<tg::Tensor> backward(tg::Context<>& ctx, const std::vector<tg::Tensor>& g) {
    const tg::Tensor x = ctx.saved_tensors()[0].contiguous();
    tg::Tensor dx = g[0].to(tg::kFloat64);
    for (int64_t i = 0; i < dx.numel(); ++i) {
      const double v = x.data<double>()[i];
      const double slope = v > 0 ? 1.0 : (v < 0 && kAbs ? -1.0 : 0.0);
      dx.data<double>()[i] *= slope;
    }
    return {dx};
  }
};

template <bool kAbs>
void check(double at) {
  const auto fn = [](const std::vector<tg::Tensor>& in) { return Kinked<kAbs>::apply(in[0]); };
  const tg::GradcheckResult r =
      tg::gradcheck(fn, {tg::full({1}, at, tg::kFloat64).requires_grad_()});
  fmt::print("{} at x = {}:\n  {}\n", kAbs ? "abs" : "relu", at, r.ok ? "ok" : r.message);
}

}  // namespace

int main() {
  check<false>(0.1);   // far from the kink (eps is 1e-6)
  check<false>(0.0);   // on the kink
  check<false>(4e-7);  // within eps of the kink: x - eps < 0 < x + eps
  check<true>(0.0);    // on a symmetric kink: passes, by luck
}
