// file: examples/course/gradcheck_kinks.cpp
// Chapter 3: gradcheck near a kink. relu(x) = max(x, 0) has no derivative at 0; like
// PyTorch, its backward uses slope 0 there. A finite difference that straddles the kink
// measures something else; gradcheck sees that the two one-sided slopes disagree, and
// accepts any value between them.
#include <fmt/format.h>

#include "core/core.h"

namespace {

// relu, |x|, or a relu whose backward claims slope 2 at x = 0 (no sub-gradient: a bug).
enum class Kind { kRelu, kAbs, kReluBadAtZero };

template <Kind kKind>
struct Kinked : tg::Function<Kinked<kKind>> {
  static constexpr std::string_view kName = kKind == Kind::kAbs ? "abs" : "relu";
  static tg::Tensor forward(tg::Context<>& ctx, const tg::Tensor& x) {
    ctx.save_for_backward(x);
    tg::Tensor y = x.to(tg::kFloat64);
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double v = y.data<double>()[i];
      y.data<double>()[i] = v > 0 ? v : (kKind == Kind::kAbs ? -v : 0.0);
    }
    return y;
  }
  // relu: dx = dy * (x > 0);  abs: dx = dy * sign(x), with sign(0) = 0
  static std::vector<tg::Tensor> backward(tg::Context<>& ctx, const std::vector<tg::Tensor>& g) {
    const tg::Tensor x = ctx.saved_tensors()[0].contiguous();
    tg::Tensor dx = g[0].to(tg::kFloat64);
    for (int64_t i = 0; i < dx.numel(); ++i) {
      const double v = x.data<double>()[i];
      double slope = v > 0 ? 1.0 : (v < 0 && kKind == Kind::kAbs ? -1.0 : 0.0);
      if (kKind == Kind::kReluBadAtZero && v == 0) slope = 2.0;
      dx.data<double>()[i] *= slope;
    }
    return {dx};
  }
};

template <Kind kKind>
void check(const char* what, double at) {
  const auto fn = [](const std::vector<tg::Tensor>& in) { return Kinked<kKind>::apply(in[0]); };
  const tg::GradcheckResult r =
      tg::gradcheck(fn, {tg::full({1}, at, tg::kFloat64).requires_grad_()});
  fmt::print("{} at x = {}: {}\n", what, at, r.ok ? "ok" : "FAILED");
  if (!r.message.empty()) fmt::print("{}\n", r.message);
}

}  // namespace

int main() {
  check<Kind::kRelu>("relu", 0.1);   // far from the kink (eps is 1e-6)
  check<Kind::kRelu>("relu", 0.0);   // on the kink
  check<Kind::kRelu>("relu", 4e-7);  // within eps of the kink: x - eps < 0 < x + eps
  check<Kind::kAbs>("abs", 0.0);     // on a symmetric kink
  check<Kind::kReluBadAtZero>("relu with slope 2 at 0", 0.0);
}
