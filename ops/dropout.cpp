// ops/dropout.cpp — dropout: the reference kernels forward and backward, then the Function.
// Tests: tests/ops/dropout_test.cpp. Course: docs/course/10-dropout.md.
//
// Shape legend: x is seen as N = numel elements in row-major order.
//
// Forward (training, with k = 1 - p the keep probability and scale = 1 / k):
//   m_i = [u_i < k]            u_i uniform on [0, 1) from the Generator, so P(m_i = 1) = k
//   y_i = x_i * (m_i * scale)
// E[y_i] = k * x_i / k = x_i: dividing by k at training time ("inverted" dropout) keeps the
// expected activation the same as at evaluation time, when dropout is the identity, so the
// trained network needs no rescaling at inference.
// Backward: y_i is linear in x_i with the fixed factor m_i * scale, so
//   dx_i = dout_i * m_i * scale
// The backward must use the SAME mask as the forward: it is saved. We save m as a bool
// tensor (1 byte per element; the scale is one number in the State) rather than the scaled
// mask in x's dtype (4 or 8 bytes per element), and rather than re-drawing it from the
// generator's (seed, offset), which would tie the backward to the generator's later use.
// p == 1 keeps nothing: scale is set to 0 (not 1/0 = inf), so y = x * 0, as PyTorch.
#include "ops/dropout.h"

#include <cmath>

#include "core/factories.h"
#include "ops/compute.h"

namespace tg {
namespace {

using kernels::GradOut;

using detail::as_compute;
using detail::compute_type;
using detail::round_to;

// ---------------------------------------------------------------- reference kernels
/// The mask: m_i = [u_i < keep], one uniform draw u_i in [0, 1) per element, in order (so a
/// seeded generator gives the same mask as PyTorch's rule, element for element).
void draw_mask(Generator& gen, bool* m, int64_t n, double keep) {
  // exercise dropout.forward_backward: begin
  for (int64_t i = 0; i < n; ++i) m[i] = gen.uniform_double() < keep;
  // exercise dropout.forward_backward: end
}

/// The factor that keeps E[y_i] = x_i: 1 / keep, and 0 when p = 1 (nothing is kept, and
/// 1 / 0 would turn the zeros into nan).
double keep_scale(double p) {
  // exercise dropout.forward_backward: begin
  const double keep = 1.0 - p;
  return p == 1.0 ? 0.0 : 1.0 / keep;
  // exercise dropout.forward_backward: end
}

/// y = x * (mask ? scale : 0) over n contiguous elements, in the compute type F.
template <class F>
void dropout_forward(const F* x, const bool* mask, F* y, int64_t n, F scale) {
  // exercise dropout.forward_backward: begin
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * (mask[i] ? scale : F(0));
  // exercise dropout.forward_backward: end
}

/// dx from dout, over n contiguous elements: the backward derived at the top of the file.
template <class F>
void dropout_backward(const F* dout, const bool* mask, GradOut<F> dx, int64_t n, F scale) {
  kernels::zero_unless_adding(dx, n);
  // exercise dropout.forward_backward: begin
  for (int64_t i = 0; i < n; ++i) dx[i] += dout[i] * (mask[i] ? scale : F(0));
  // exercise dropout.forward_backward: end
}

// ---------------------------------------------------------------- helpers
void check_args(const Tensor& x, double p) {
  TG_CHECK(is_floating_point(x.dtype()), DTypeError, "dropout: x {} must be floating point, got {}",
           x.shape(), x.dtype());
  TG_CHECK(p >= 0.0 && p <= 1.0, ValueError, "dropout: p must be in [0, 1], got p = {}", p);
}

// ---------------------------------------------------------------- Function
struct Dropout : Function<Dropout> {
  static constexpr std::string_view kName = "dropout";
  struct State {
    double scale = 1.0;  // 1 / (1 - p), or 0 when p == 1
  };

  // forward: m_i = [u_i < 1 - p], y_i = x_i * m_i * scale
  static Tensor forward(Context<State>& ctx, const Tensor& x, double p, Generator& gen) {
    const double scale = keep_scale(p);
    Tensor mask = empty(x.shape(), kBool);
    bool* m = mask.data<bool>();
    draw_mask(gen, m, x.numel(), 1.0 - p);

    const DType ct = compute_type(x.dtype());
    const Tensor xc = as_compute(x, ct);
    Tensor y = empty(x.shape(), ct);
    visit_dtype(ct, [&]<class F>() {
      if constexpr (std::is_floating_point_v<F>) {
        dropout_forward(xc.data<F>(), m, y.data<F>(), x.numel(), static_cast<F>(scale));
      }
    });
    ctx.save_for_backward(mask);  // 1 byte per element; x and y are not needed
    ctx.state.scale = scale;
    return round_to(y, x.dtype());
  }

  // forward was: y_i = x_i * m_i * scale   (m and scale fixed by the forward)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const Tensor mask = ctx.saved_tensors()[0];
    const DType ct = compute_type(g[0].dtype());
    const Tensor gc = as_compute(g[0], ct);
    const GradBuffer dx = ctx.grad_buffer(0, g[0].shape(), ct);
    detail::visit_compute(ct, [&]<class F>() {
      dropout_backward(gc.data<F>(), mask.data<bool>(), detail::grad_out<F>(dx), gc.numel(),
                       static_cast<F>(ctx.state.scale));
    });
    return {detail::finish_grad(dx, g[0].dtype())};
  }
};

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator& gen, Here here) {
  check_args(x, p);
  // Identity: x itself, as torch.nn.functional.dropout returns its input in eval mode and for
  // p = 0. Nothing is drawn from gen and nothing is recorded (the gradient reaches x as is).
  if (!training || p == 0.0) return x;
  return Dropout::apply_at(here, x, p, gen);
}

}  // namespace tg
