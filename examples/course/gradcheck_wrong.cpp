// file: examples/course/gradcheck_wrong.cpp
// Chapter 3: reading a gradcheck failure. prod(x) = x0 * x1 * ... * x(n-1) as a custom op,
// with its right backward and with two classic bugs.
#include <fmt/format.h>

#include "core/core.h"

namespace {

enum class Bug { kNone, kForgotUpstream, kLoopStopsEarly };

template <Bug kBug>
struct Prod : tg::Function<Prod<kBug>> {
  static constexpr std::string_view kName = "prod";
  static tg::Tensor forward(tg::Context<>& ctx, const tg::Tensor& x) {
    const tg::Tensor xc = x.contiguous();
    double p = 1;
    for (int64_t i = 0; i < xc.numel(); ++i) p *= xc.data<double>()[i];
    ctx.save_for_backward(xc);
    return tg::scalar_tensor(p, tg::kFloat64);
  }
  // forward was: y = prod_j x_j, so dx_i = dy * prod_{j != i} x_j
  static std::vector<tg::Tensor> backward(tg::Context<>& ctx, const std::vector<tg::Tensor>& g) {
    const tg::Tensor x = ctx.saved_tensors()[0];
    const double* xs = x.data<double>();
    const double dy = kBug == Bug::kForgotUpstream ? 1.0 : g[0].item<double>();
    const int64_t n = x.numel(), end = kBug == Bug::kLoopStopsEarly ? n - 1 : n;
    tg::Tensor dx = tg::zeros(x.shape(), tg::kFloat64);
    for (int64_t i = 0; i < end; ++i) {
      double others = 1;
      for (int64_t j = 0; j < n; ++j) {
        if (j != i) others *= xs[j];
      }
      dx.data<double>()[i] = dy * others;
    }
    return {dx};
  }
};

template <Bug kBug>
void check(const char* what, const tg::Tensor& x) {
  const auto fn = [](const std::vector<tg::Tensor>& in) { return Prod<kBug>::apply(in[0]); };
  const tg::GradcheckResult r = tg::gradcheck(fn, {x});
  fmt::print("{}:\n  {}\n", what, r.ok ? "ok" : r.message);
}

}  // namespace

int main() {
  tg::Generator gen(1);
  const tg::Tensor x = tg::randn({4}, tg::kFloat64, gen).requires_grad_();
  fmt::print("x = {}\n\n", x);
  check<Bug::kNone>("the right backward", x);
  check<Bug::kForgotUpstream>("a backward that forgets to multiply by dy", x);
  check<Bug::kLoopStopsEarly>("a backward whose loop stops one element early", x);

  // gradcheck's upstream gradient v: a seeded randn of the output's shape (seed 0).
  tg::Generator v_gen(0);
  fmt::print("\nthe upstream gradient v = {}\n", tg::randn({}, tg::kFloat64, v_gen).item<double>());
}
