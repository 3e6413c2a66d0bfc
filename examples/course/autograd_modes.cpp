// file: examples/course/autograd_modes.cpp
// Chapter 2: the switches and safety nets around the tape: no_grad, detach, retain_graph,
// hooks and retain_grad, version counters, and anomaly mode.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "core/core.h"
#include "ops/ops.h"

namespace {

tg::Tensor number(double v) { return tg::scalar_tensor(v, tg::kFloat64); }
double value(const tg::Tensor& t) { return t.item<double>(); }

// sqrt as a custom op. Its derivative 1 / (2 sqrt(x)) is infinite at x = 0.
struct Sqrt : tg::Function<Sqrt> {
  static constexpr std::string_view kName = "sqrt";
  static tg::Tensor forward(tg::Context<>& ctx, const tg::Tensor& x) {
    tg::Tensor y = x.to(tg::kFloat64);  // a fresh contiguous copy, overwritten below
    for (int64_t i = 0; i < y.numel(); ++i) y.data<double>()[i] = std::sqrt(y.data<double>()[i]);
    ctx.save_for_backward(y);  // the derivative is a function of the output
    return y;
  }
  // forward was: y = sqrt(x), so dx = dy / (2 y)
  static std::vector<tg::Tensor> backward(tg::Context<>& ctx, const std::vector<tg::Tensor>& g) {
    const tg::Tensor y = ctx.saved_tensors()[0];
    tg::Tensor dx = g[0].to(tg::kFloat64);
    for (int64_t i = 0; i < dx.numel(); ++i) dx.data<double>()[i] /= 2 * y.data<double>()[i];
    return {dx};
  }
};
tg::Tensor sqrt_op(const tg::Tensor& x, tg::Here here = tg::Here::current()) {
  return Sqrt::apply_at(here, x);
}

// The anomaly message gives the caller's file with its full path and the function's
// name; keep only "file:line" so that this output is the same on every machine.
std::string short_location(std::string message) {
  const size_t file = message.find("autograd_modes.cpp");
  const size_t start = message.rfind(' ', file) + 1;
  message.erase(start, file - start);
  return message.substr(0, message.find(" in ", start));
}

}  // namespace

int main() {
  tg::Tensor p = number(2).requires_grad_();

  // 1. no_grad: nothing is recorded while the guard lives (evaluation, optimizer steps).
  {
    tg::NoGradGuard no_grad;
    const tg::Tensor q = p * p;
    fmt::print("no_grad: q.requires_grad() = {}, q.is_leaf() = {}\n", q.requires_grad(),
               q.is_leaf());
  }

  // 2. detach: the same value with no history, so the tape sees a constant.
  const tg::Tensor d = (p * p).detach();
  (d * p).backward();  // d * p = p^3 in value, but the gradient flows through p only
  fmt::print("\ndetach: d(p^2 detached * p)/dp = {} (p^2), not 3p^2 = 12\n", value(p.grad()));

  // 3. retain_graph: backward frees what the ops saved, so a second backward fails...
  const tg::Tensor s = p * p;
  s.backward();
  try {
    s.backward();
  } catch (const tg::MisuseError& e) {
    fmt::print("\nsecond backward: {}\n", e.what());
  }
  // ... unless the first one keeps it.
  p.set_grad(tg::Tensor());  // clear the gradient accumulated so far
  const tg::Tensor r = p * p;
  r.backward({}, /*retain_graph=*/true);
  r.backward();
  fmt::print("retain_graph: two backwards, p.grad = {} (2p, twice)\n", value(p.grad()));

  // 4. Hooks see (and may replace) a gradient as it flows; retain_grad keeps a non-leaf's.
  p.set_grad(tg::Tensor());
  const tg::Tensor h = p * p;
  h.register_hook([](const tg::Tensor& g) {
    fmt::print("\nhook on h: gradient {}\n", value(g));
    return tg::Tensor();  // undefined: keep the gradient unchanged
  });
  p.register_hook([](const tg::Tensor& g) { return tg::mul(g, number(0.5)); });  // halve it
  h.retain_grad();
  (h * number(3)).backward();
  fmt::print("h.grad = {}, p.grad = {} (2p * 3 = 12, halved by the hook)\n", value(h.grad()),
             value(p.grad()));

  // 5. Version counters: mul saved c; changing c in place afterwards would make the
  //    gradient silently wrong, so backward refuses.
  tg::Tensor a = number(2).requires_grad_();
  tg::Tensor c = number(5);
  const tg::Tensor ac = a * c;
  c.fill_(0.0);
  try {
    ac.backward();
  } catch (const tg::MisuseError& e) {
    fmt::print("\nin-place change: {}\n", e.what());
  }

  // 6. Anomaly mode: without it, an Inf produced by a backward flows silently into .grad.
  tg::Tensor zero = number(0).requires_grad_();
  sqrt_op(zero).backward();
  fmt::print("\nd sqrt(x)/dx at 0 = {}\n", value(zero.grad()));
  tg::DetectAnomalyGuard anomaly;
  const tg::Tensor root = sqrt_op(zero);
  try {
    root.backward();
  } catch (const tg::ValueError& e) {
    fmt::print("{}\n", short_location(e.what()));
  }
}
