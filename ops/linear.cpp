// ops/linear.cpp — linear: the reference kernels forward and backward, then the Function.
// Tests: tests/ops/linear_test.cpp. Course: docs/course/04-linear.md.
//
// B = batch, T = time, C = channels; N = the product of x's leading dims (B * T for a
// (B, T, C) input), I = in_features, O = out_features.
//
// Every leading dim of x plays the same role, so the op flattens x to an (N, I) matrix:
//
//   forward:   y_no = b_o + sum_i x_ni * W_oi          y = x W^T + b        (N, O)
//
// Backward, from dL/dy = dy (N, O). Each W_oi is used by every row n, each x_ni by every
// output o, each b_o by every row n, so the chain rule sums over those uses:
//
//   dx_ni = sum_o dy_no * d(y_no)/d(x_ni) = sum_o dy_no * W_oi     dx = dy W       (N, I)
//   dW_oi = sum_n dy_no * d(y_no)/d(W_oi) = sum_n dy_no * x_ni     dW = dy^T x     (O, I)
//   db_o  = sum_n dy_no * d(y_no)/d(b_o)  = sum_n dy_no            db = sum_n dy   (O)
//
// The sums over n run over ALL leading dims at once: for (B, T, C) activations one weight
// serves every position of every sequence, so its gradient collects all B * T of them.
// Backward needs x (for dW) and W (for dx), not y and not b.
//
// The fast kernels (ops/fast/linear.cpp) compute the same three products on the blocked GEMM.
#include "ops/linear.h"

#include "ops/compute.h"
#include "ops/elementwise.h"

namespace tg {
namespace {

using kernels::GradOut;
using kernels::zero_unless_adding;

// ---------------------------------------------------------------- reference kernels
/// y = x W^T + b. Each y_no is a dot product of two contiguous rows, x_n and W_o, which is
/// why Linear keeps W as (out, in).
template <class F>
void linear_forward(const F* x, const F* w, const F* b, F* y, int64_t rows, int64_t in,
                    int64_t out) {
  // exercise linear.forward: begin
  for (int64_t n = 0; n < rows; ++n) {
    const F* x_row = x + n * in;
    for (int64_t o = 0; o < out; ++o) {
      const F* w_row = w + o * in;
      F acc = b != nullptr ? b[o] : F(0);
      for (int64_t i = 0; i < in; ++i) acc += x_row[i] * w_row[i];
      y[n * out + o] = acc;
    }
  }
  // exercise linear.forward: end
}

/// dx, dW and db, each a sum over the uses derived at the top. The loops run n-o-i, so the
/// innermost loop walks contiguous rows of W, x, dx and dW.
template <class F>
void linear_backward(const F* dy, const F* x, const F* w, GradOut<F> dx, GradOut<F> dw,
                     GradOut<F> db, int64_t rows, int64_t in, int64_t out) {
  zero_unless_adding(dx, rows * in);
  zero_unless_adding(dw, out * in);
  zero_unless_adding(db, out);
  // exercise linear.backward: begin
  for (int64_t n = 0; n < rows; ++n) {
    const F* x_row = x + n * in;
    F* dx_row = dx ? dx.data + n * in : nullptr;
    for (int64_t o = 0; o < out; ++o) {
      const F g = dy[n * out + o];
      if (db) db[o] += g;
      if (dx_row != nullptr) {
        const F* w_row = w + o * in;
        for (int64_t i = 0; i < in; ++i) dx_row[i] += g * w_row[i];
      }
      if (dw) {
        F* dw_row = dw.data + o * in;
        for (int64_t i = 0; i < in; ++i) dw_row[i] += g * x_row[i];
      }
    }
  }
  // exercise linear.backward: end
}

// ---------------------------------------------------------------- the Function
/// N: the product of x's leading dims (x viewed as an (N, in_features) matrix).
int64_t rows_of(const Tensor& x) {
  int64_t n = 1;
  for (size_t d = 0; d + 1 < x.dim(); ++d) n *= x.shape()[d];
  return n;
}

void check_args(const Tensor& x, const Tensor& w, const Tensor& b) {
  TG_CHECK(x.dim() >= 1, ShapeError,
           "linear: x must have at least 1 dim (..., in_features), got a 0-d tensor {}", x.shape());
  TG_CHECK(w.dim() == 2, ShapeError,
           "linear: weight must be 2-D (out_features, in_features), got shape {}", w.shape());
  TG_CHECK(x.size(-1) == w.size(1), ShapeError,
           "linear: x {} and weight {} disagree on in_features ({} vs {})", x.shape(), w.shape(),
           x.size(-1), w.size(1));
  if (b.defined()) {
    TG_CHECK(b.dim() == 1 && b.size(0) == w.size(0), ShapeError,
             "linear: bias {} does not fit weight {}: expected shape ({})", b.shape(), w.shape(),
             w.size(0));
  }
  detail::check_floating(x, "linear");
  TG_CHECK(x.dtype() == w.dtype(), DTypeError, "linear: x is {} but weight is {}; convert one",
           dtype_name(x.dtype()), dtype_name(w.dtype()));
  if (b.defined()) {
    TG_CHECK(b.dtype() == w.dtype(), DTypeError, "linear: bias is {} but weight is {}",
             dtype_name(b.dtype()), dtype_name(w.dtype()));
  }
}

struct Linear : Function<Linear> {
  static constexpr std::string_view kName = "linear";
  static constexpr AutocastRule kAutocast = AutocastRule::kLowPrecision;  // core/autocast.h
  // forward: y = x W^T + b, with x flattened to (N, I)
  static Tensor forward(Context<>& ctx, const Tensor& x, const Tensor& w, const Tensor& b) {
    check_args(x, w, b);
    const DType ct = detail::compute_type(x.dtype());
    const int64_t in = w.size(1), out = w.size(0), rows = rows_of(x);
    Shape y_shape = x.shape();
    y_shape[y_shape.size() - 1] = out;
    if (auto* bf16 = kernels::linear_forward_bf16.get(); bf16 && x.dtype() == kBFloat16) {
      const Tensor xc = x.contiguous(), wc = w.contiguous();
      const Tensor bc = detail::as_compute(b, kFloat32);
      Tensor y = empty(y_shape, kBFloat16);
      bf16(xc.data<BFloat16>(), wc.data<BFloat16>(), b.defined() ? bc.data<float>() : nullptr,
           y.data<BFloat16>(), rows, in, out);
      ctx.save_for_backward(x, w);
      return y;
    }
    const Tensor xc = detail::as_compute(x, ct), wc = detail::as_compute(w, ct);
    const Tensor bc = detail::as_compute(b, ct);
    Tensor y = empty(y_shape, ct);
    detail::visit_compute(ct, [&]<class F>() {
      kernels::linear_forward.get<F>()(xc.data<F>(), wc.data<F>(),
                                       b.defined() ? bc.data<F>() : nullptr, y.data<F>(), rows, in,
                                       out);
    });
    ctx.save_for_backward(x, w);
    return detail::round_to(y, x.dtype());
  }
  // backward: dx = dy W, dW = dy^T x, db = sum over every leading dim of dy
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &x = saved[0], &w = saved[1];
    const DType ct = detail::compute_type(x.dtype());
    const int64_t in = w.size(1), out = w.size(0), rows = rows_of(x);
    if (auto* bf16 = kernels::linear_backward_bf16.get(); bf16 && x.dtype() == kBFloat16) {
      const Tensor dy = g[0].dtype() == kBFloat16 ? g[0].contiguous() : g[0].to(kBFloat16);
      const Tensor xc = x.contiguous(), wc = w.contiguous();
      // dx is rounded to bfloat16 by the kernel, tile by tile (x's .grad, if it has one, is
      // bfloat16: no float32 buffer could be added into).
      Tensor dx = ctx.needs_input_grad(0) ? empty(x.shape(), kBFloat16) : Tensor();
      const GradBuffer dw = ctx.grad_buffer(1, w.shape(), kFloat32);
      const GradBuffer db = ctx.grad_buffer(2, {out}, kFloat32);
      bf16(dy.data<BFloat16>(), xc.data<BFloat16>(), wc.data<BFloat16>(),
           dx.defined() ? dx.data<BFloat16>() : nullptr, detail::grad_out<float>(dw),
           detail::grad_out<float>(db), rows, in, out);
      return {dx, detail::finish_grad(dw, kBFloat16), detail::finish_grad(db, kBFloat16)};
    }
    const Tensor dy = detail::as_compute(g[0], ct), xc = detail::as_compute(x, ct);
    const Tensor wc = detail::as_compute(w, ct);
    const GradBuffer dx = ctx.grad_buffer(0, x.shape(), ct);
    const GradBuffer dw = ctx.grad_buffer(1, w.shape(), ct);
    const GradBuffer db = ctx.grad_buffer(2, {out}, ct);  // undefined without a bias
    detail::visit_compute(ct, [&]<class F>() {
      kernels::linear_backward.get<F>()(dy.data<F>(), xc.data<F>(), wc.data<F>(),
                                        detail::grad_out<F>(dx), detail::grad_out<F>(dw),
                                        detail::grad_out<F>(db), rows, in, out);
    });
    return {detail::finish_grad(dx, x.dtype()), detail::finish_grad(dw, w.dtype()),
            detail::finish_grad(db, w.dtype())};
  }
};

}  // namespace

constinit kernels::KernelPair<kernels::LinearForward, float, double> kernels::linear_forward{
    tg::linear_forward<float>, tg::linear_forward<double>};
constinit kernels::KernelPair<kernels::LinearBackward, float, double> kernels::linear_backward{
    tg::linear_backward<float>, tg::linear_backward<double>};
constinit kernels::Kernel<kernels::LinearForwardBF16> kernels::linear_forward_bf16{nullptr};
constinit kernels::Kernel<kernels::LinearBackwardBF16> kernels::linear_backward_bf16{nullptr};

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, Here here) {
  return Linear::apply_at(here, x, weight, bias);
}

}  // namespace tg
