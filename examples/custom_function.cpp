// file: examples/custom_function.cpp
// examples/custom_function.cpp — the Huber loss written as your own tg::Function.
//
// Shapes: pred and target are both (...), any rank, the same shape; N = numel. The loss is
// a 0-d tensor, and delta > 0 is a plain number. It is PyTorch's
// torch.nn.functional.huber_loss(pred, target, reduction='mean', delta=delta).
//
//   forward:  d_i = pred_i - target_i
//             l_i = 0.5 d_i^2                   if |d_i| < delta   (a parabola near 0)
//                   delta (|d_i| - 0.5 delta)   otherwise          (two lines, slope +-delta)
//             L   = sum_i l_i / N
//
//   backward, given dL = dloss/dL, a scalar (the chain rule, one step at a time):
//             dL/dl_i      = 1 / N
//             dl_i/dd_i    = d_i if |d_i| < delta, else delta * sign(d_i)
//                          = clamp(d_i, -delta, delta)
//             dd_i/dpred_i = 1,  dd_i/dtarget_i = -1
//   so:       dpred_i = clamp(d_i, -delta, delta) / N * dL      dtarget_i = -dpred_i
//
// So the backward reads d and delta, and nothing else. d is one tensor where pred and target
// are two: saving it halves the memory the node holds. delta is a number, not a tensor, so it
// goes in the op's typed State.
//
// Smoothness: at |d| = delta both branches give the value delta^2 / 2 and the slope +-delta,
// so the first derivative is continuous, with no kink like ReLU's at 0; only the
// second derivative jumps, from 1 inside to 0 outside. gradcheck would pass there too, but a
// finite difference that straddles |d| = delta mixes the two branches, and which branch the
// kernel takes for a d within rounding of delta depends on how pred - target rounds. So the
// check below keeps every |d| at least 0.1 away from delta: each element tests one branch.
//
// The program checks the backward against finite differences with tg::gradcheck and exits
// with status 1 if it disagrees.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/core.h"

namespace {

using tg::Context;
using tg::Tensor;

// ---------------------------------------------------------------- the kernels
// Plain loops over contiguous memory, in the compute type T: float or double.

/// diff_i = pred_i - target_i; returns sum_i l_i (the caller divides by N).
template <class T>
T huber_forward(const T* pred, const T* target, T* diff, T delta, int64_t n) {
  T total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T d = pred[i] - target[i];
    const T a = std::abs(d);
    diff[i] = d;
    total += a < delta ? T(0.5) * d * d : delta * (a - T(0.5) * delta);
  }
  return total;
}

/// dpred_i = clamp(diff_i, -delta, delta) * scale and dtarget_i = -dpred_i, with
/// scale = dL / N. A null dpred or dtarget skips that gradient.
template <class T>
void huber_backward(const T* diff, T delta, T scale, T* dpred, T* dtarget, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    // forward was: l_i = |d_i| < delta ? 0.5 d_i^2 : delta (|d_i| - 0.5 delta)
    // so:          dl_i/dd_i = d_i inside, +-delta outside, that is clamp(d_i, -delta, delta)
    const T g = std::clamp(diff[i], -delta, delta) * scale;
    if (dpred != nullptr) dpred[i] = g;
    if (dtarget != nullptr) dtarget[i] = -g;
  }
}

// Runs fn.template operator()<T>() with T = double for float64 and float for float32.
template <class Fn>
void dispatch(tg::DType dtype, Fn&& fn) {
  if (dtype == tg::kFloat64) fn.template operator()<double>();
  else fn.template operator()<float>();
}

// ---------------------------------------------------------------- the Function

struct HuberLoss : tg::Function<HuberLoss> {
  static constexpr std::string_view kName = "huber_loss";
  // What backward needs that is not a tensor: named and typed, read as ctx.state.delta.
  struct State {
    double delta = 1.0;  // where the parabola turns into the lines
  };

  static Tensor forward(Context<State>& ctx, const Tensor& pred, const Tensor& target,
                        double delta) {
    // Check everything before any work, naming the op and the actual values.
    TG_CHECK(pred.shape() == target.shape(), ShapeError,
             "huber_loss: pred {} and target {} must have the same shape", pred.shape(),
             target.shape());
    TG_CHECK(pred.dtype() == target.dtype() &&
                 (pred.dtype() == tg::kFloat32 || pred.dtype() == tg::kFloat64),
             DTypeError,
             "huber_loss: needs pred and target both float32 or both float64, got {} and {}",
             pred.dtype(), target.dtype());
    TG_CHECK(delta > 0, ValueError, "huber_loss: delta must be > 0, got {}", delta);
    const Tensor pc = pred.contiguous(), tc = target.contiguous();
    const int64_t n = pred.numel();
    Tensor diff = tg::empty(pred.shape(), pred.dtype());
    Tensor loss = tg::empty({}, pred.dtype());
    dispatch(pred.dtype(), [&]<class T>() {
      const T total = huber_forward(pc.data<T>(), tc.data<T>(), diff.data<T>(), T(delta), n);
      loss.data<T>()[0] = total / static_cast<T>(n);  // N = 0 gives 0/0 = nan, as in PyTorch
    });
    ctx.state.delta = delta;
    ctx.save_for_backward(diff);  // d, not pred and target: one tensor instead of two
    return loss;
  }

  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& grads) {
    const Tensor diff = ctx.saved_tensors()[0];
    const int64_t n = diff.numel();
    // One slot per tensor input of forward, in order. An input that needs no gradient (the
    // target, usually: it is data) gets no work and an undefined Tensor() in its slot.
    Tensor dpred, dtarget;
    if (ctx.needs_input_grad(0)) dpred = tg::empty(diff.shape(), diff.dtype());
    if (ctx.needs_input_grad(1)) dtarget = tg::empty(diff.shape(), diff.dtype());
    dispatch(diff.dtype(), [&]<class T>() {
      const T scale = grads[0].item<T>() / static_cast<T>(n);  // dL / N; dL is 0-d
      huber_backward(diff.data<T>(), T(ctx.state.delta), scale,
                     dpred.defined() ? dpred.data<T>() : nullptr,
                     dtarget.defined() ? dtarget.data<T>() : nullptr, n);
    });
    return {dpred, dtarget};
  }
};

/// The mean Huber loss between pred and target, as one op on the tape.
Tensor huber_loss(const Tensor& pred, const Tensor& target, double delta = 1.0,
                  tg::Here here = tg::Here::current()) {
  return HuberLoss::apply_at(here, pred, target, delta);
}

// ---------------------------------------------------------------- inputs for the check

/// A float64 target for pred whose every |pred - target| is at least 0.1 away from delta.
Tensor target_away_from_delta(const Tensor& pred, double delta, tg::Generator& gen) {
  Tensor target = tg::randn(pred.shape(), tg::kFloat64, gen);
  const std::vector<double> p = pred.to_vector<double>();  // row-major, even for a view
  double* t = target.data<double>();
  for (int64_t i = 0; i < target.numel(); ++i) {
    const double d = p[i] - t[i];
    if (std::abs(std::abs(d) - delta) < 0.1) t[i] += d > 0 ? 0.25 : -0.25;  // move |d| in
  }
  return target;
}

/// How many elements have |d| < delta: a good check covers both branches.
int64_t on_parabola(const Tensor& pred, const Tensor& target, double delta) {
  const std::vector<double> p = pred.to_vector<double>(), t = target.to_vector<double>();
  int64_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) k += std::abs(p[i] - t[i]) < delta;
  return k;
}

}  // namespace

int main() {
  // 1. By hand, with delta = 1: d = pred - target = (0.5, 3, -1.5, -0.5), so
  //    l = (0.5 * 0.5^2, 3 - 0.5, 1.5 - 0.5, 0.5 * 0.5^2) = (0.125, 2.5, 1, 0.125), L = 3.75 / 4,
  //    and dpred = clamp(d, -1, 1) / 4 = (0.125, 0.25, -0.25, -0.125).
  const Tensor pred1 = tg::tensor({1.5f, 3.f, -1.f, 0.f}).requires_grad_();
  const Tensor target1 = tg::tensor({1.f, 0.f, 0.5f, 0.5f});
  const Tensor loss1 = huber_loss(pred1, target1, 1.0);
  loss1.backward();
  fmt::print("huber_loss = {} (3.75 / 4)\n", loss1.item<float>());
  fmt::print("pred.grad = {}\n", pred1.grad());
  fmt::print("target.grad defined: {} (the target needs no gradient, so backward skipped it)\n\n",
             target1.grad().defined());

  // 2. The op on the tape: one node that saved d, and delta in its State.
  constexpr double kDelta = 1.0;
  tg::Generator gen(0);
  const Tensor pred = tg::randn({2, 3, 4}, tg::kFloat64, gen).requires_grad_();
  const Tensor target = target_away_from_delta(pred, kDelta, gen);
  const Tensor loss = huber_loss(pred, target, kDelta);
  fmt::print("{}\n", tg::print_tape(loss));

  // 3. The backward against finite differences, in float64: first for pred only, then for
  //    a non-contiguous pred with a target that requires grad too (so dtarget is checked).
  auto fn = [&](const std::vector<Tensor>& in) { return huber_loss(in[0], in[1], kDelta); };
  const tg::GradcheckResult r = tg::gradcheck(fn, {pred, target});
  fmt::print("gradcheck, pred {}, {} of {} on the parabola: {}\n", pred.shape(),
             on_parabola(pred, target, kDelta), pred.numel(), r.ok ? "ok" : r.message);
  const Tensor pred_t = tg::randn({4, 6}, tg::kFloat64, gen).t().requires_grad_();
  const Tensor target_t = target_away_from_delta(pred_t, kDelta, gen).requires_grad_();
  const tg::GradcheckResult rt = tg::gradcheck(fn, {pred_t, target_t});
  fmt::print("gradcheck, pred {} (a transpose) and target, {} of {} on the parabola: {}\n",
             pred_t.shape(), on_parabola(pred_t, target_t, kDelta), pred_t.numel(),
             rt.ok ? "ok" : rt.message);
  return r.ok && rt.ok ? 0 : 1;
}
