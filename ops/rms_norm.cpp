// ops/rms_norm.cpp — RMSNorm: the reference kernels forward and backward, then two Functions.
// Tests: tests/ops/rms_norm_test.cpp. Course: docs/course/06-rms-norm.md.
//
// Shape legend: B = batch, T = time, C = channels. x is seen as `rows` rows of C channels
// (rows = product of the leading dims, e.g. B * T), each normalised on its own.
//
// Forward, per row (with ms the mean square and s the reciprocal RMS, "rstd"):
//   ms  = sum_c x_c^2 / C
//   s   = (ms + eps)^(-1/2)
//   y_c = x_c * s * w_c
// Backward, per row (y_c depends on x_j directly through x_c when c = j, and through s):
//   ds/dx_j  = -1/2 * (ms + eps)^(-3/2) * 2 x_j / C          = -s^3 * x_j / C
//   dy_c/dx_j = [c = j] * s * w_c + x_c * w_c * ds/dx_j
//   dx_j = sum_c dout_c * dy_c/dx_j
//        = s * dout_j * w_j - (s^3 * x_j / C) * sum_c(dout_c * w_c * x_c)
//        = s * (dout_j * w_j - x_j * s^2 * sum_c(dout_c * w_c * x_c) / C)
//   dw_c = sum over rows of dout_c * x_c * s         (w_c is shared by every row)
// So backward needs x, w and the one number s per row: s is saved, y is not.
//
// float16/bfloat16 are widened to float32 before anything is squared: 300^2 = 90000 is
// already past float16's largest value (65504), so a half-precision sum of squares
// overflows to inf and the whole row would come out as 0.
//
// The fast kernels (ops/fast/rms_norm.cpp) vectorise the row sums, split rows over threads
// and fuse add_rms_norm's add into the same sweep over memory.
#include "ops/rms_norm.h"

#include <cmath>

#include "ops/compute.h"
#include "ops/elementwise.h"

namespace tg {
namespace {

using kernels::GradOut;
using kernels::zero_unless_adding;

// ---------------------------------------------------------------- reference kernels
template <class F>
void rms_norm_forward(const F* x, const F* w, F* y, F* rstd, int64_t rows, int64_t cols, F eps) {
  // exercise rms_norm.forward: begin
  for (int64_t r = 0; r < rows; ++r) {
    const F* xr = x + r * cols;
    F* y_row = y + r * cols;
    F sum_sq = 0;
    for (int64_t c = 0; c < cols; ++c) sum_sq += xr[c] * xr[c];
    const F ms = sum_sq / static_cast<F>(cols);  // the mean square
    const F s = F(1) / std::sqrt(ms + eps);
    rstd[r] = s;
    for (int64_t c = 0; c < cols; ++c) y_row[c] = xr[c] * s * w[c];
  }
  // exercise rms_norm.forward: end
}

/// dx and dw as derived at the top of the file, from dout, x, w and the saved s per row.
template <class F>
void rms_norm_backward(const F* dout, const F* x, const F* w, const F* rstd, GradOut<F> dx,
                       GradOut<F> dw, int64_t rows, int64_t cols) {
  zero_unless_adding(dx, rows * cols);
  zero_unless_adding(dw, cols);
  // exercise rms_norm.backward: begin
  for (int64_t r = 0; r < rows; ++r) {
    const F* gr = dout + r * cols;
    const F* xr = x + r * cols;
    const F s = rstd[r];
    if (dx) {
      F dot = 0;  // sum_c(dout_c * w_c * x_c)
      for (int64_t c = 0; c < cols; ++c) dot += gr[c] * w[c] * xr[c];
      const F k = s * s * dot / static_cast<F>(cols);
      F* dxr = dx.data + r * cols;
      for (int64_t c = 0; c < cols; ++c) dxr[c] += s * (gr[c] * w[c] - xr[c] * k);
    }
    if (dw) {
      for (int64_t c = 0; c < cols; ++c) dw[c] += gr[c] * xr[c] * s;
    }
  }
  // exercise rms_norm.backward: end
}

// add_rms_norm, for float32 and float64 (where h needs no rounding between the add and the
// norm): h = residual + branch, then rms_norm of h.
template <class F>
void add_rms_norm_forward(const F* residual, const F* branch, const F* w, F* h, F* y, F* rstd,
                          int64_t rows, int64_t cols, F eps) {
  for (int64_t i = 0; i < rows * cols; ++i) h[i] = residual[i] + branch[i];
  rms_norm_forward(h, w, y, rstd, rows, cols, eps);
}

// h reaches the loss twice, through out and as the residual output itself, so
//   dh = (rms_norm's dx, with h for x) + dh_out
template <class F>
void add_rms_norm_backward(const F* dout, const F* dh_out, const F* h, const F* w, const F* rstd,
                           GradOut<F> dh, GradOut<F> dw, int64_t rows, int64_t cols) {
  rms_norm_backward(dout, h, w, rstd, dh, dw, rows, cols);
  if (dh) {
    for (int64_t i = 0; i < rows * cols; ++i) dh[i] += dh_out[i];
  }
}

// ---------------------------------------------------------------- the Functions
void check_args(const char* op, const Tensor& x, const Tensor& weight, double eps) {
  TG_CHECK(is_floating_point(x.dtype()), DTypeError, "{}: x {} must be floating point, got {}", op,
           x.shape(), x.dtype());
  TG_CHECK(weight.dtype() == x.dtype(), DTypeError,
           "{}: weight {} is {} but x {} is {}; convert one with .to()", op, weight.shape(),
           weight.dtype(), x.shape(), x.dtype());
  TG_CHECK(x.dim() >= 1, ShapeError, "{}: x must have at least 1 dim (..., C), got shape {}", op,
           x.shape());
  TG_CHECK(weight.dim() == 1 && weight.size(0) == x.size(-1), ShapeError,
           "{}: weight must be [C] = ({}) for x {}, got weight {}", op, x.size(-1), x.shape(),
           weight.shape());
  TG_CHECK(eps > 0, ValueError, "{}: eps must be > 0, got {}", op, eps);
}

/// x seen as rows of C.
struct Rows {
  int64_t rows, cols;
  explicit Rows(const Tensor& x) : rows(0), cols(x.size(-1)) {
    rows = cols == 0 ? 0 : x.numel() / cols;
  }
};

struct Normalized {
  Tensor y;     // in x's dtype
  Tensor rstd;  // (rows), in the compute type
};

/// rms_norm's forward: y = x * s * w with s = rstd per row.
Normalized normalize(const Tensor& x, const Tensor& weight, double eps) {
  const DType ct = detail::compute_type(x.dtype());
  const Rows n(x);
  const Tensor xc = detail::as_compute(x, ct), wc = detail::as_compute(weight, ct);
  Tensor y = empty(x.shape(), ct), rstd = empty({n.rows}, ct);
  detail::visit_compute(ct, [&]<class F>() {
    kernels::rms_norm_forward.get<F>()(xc.data<F>(), wc.data<F>(), y.data<F>(), rstd.data<F>(),
                                       n.rows, n.cols, static_cast<F>(eps));
  });
  return {detail::round_to(y, x.dtype()), rstd};
}

struct RmsNorm : Function<RmsNorm> {
  static constexpr std::string_view kName = "rms_norm";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  static Tensor forward(Context<>& ctx, const Tensor& x, const Tensor& weight, double eps) {
    check_args("rms_norm", x, weight, eps);
    Normalized n = normalize(x, weight, eps);
    ctx.save_for_backward(x, weight, n.rstd);  // rstd: one number per row, y not needed
    return n.y;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &x = saved[0], &weight = saved[1], &rstd = saved[2];
    const DType ct = rstd.dtype();
    const Rows n(x);
    const Tensor gc = detail::as_compute(g[0], ct), xc = detail::as_compute(x, ct);
    const Tensor wc = detail::as_compute(weight, ct);
    const GradBuffer dx = ctx.grad_buffer(0, x.shape(), ct);
    const GradBuffer dw = ctx.grad_buffer(1, weight.shape(), ct);
    detail::visit_compute(ct, [&]<class F>() {
      kernels::rms_norm_backward.get<F>()(gc.data<F>(), xc.data<F>(), wc.data<F>(), rstd.data<F>(),
                                          detail::grad_out<F>(dx), detail::grad_out<F>(dw), n.rows,
                                          n.cols);
    });
    return {detail::finish_grad(dx, x.dtype()), detail::finish_grad(dw, weight.dtype())};
  }
};

struct AddRmsNorm : Function<AddRmsNorm> {
  static constexpr std::string_view kName = "add_rms_norm";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  // outputs: {out, h}, h = residual + branch (rounded to the dtype), out = rms_norm(h)
  static std::vector<Tensor> forward(Context<>& ctx, const Tensor& residual, const Tensor& branch,
                                     const Tensor& weight, double eps) {
    check_args("add_rms_norm", residual, weight, eps);
    TG_CHECK(branch.dtype() == residual.dtype(), DTypeError,
             "add_rms_norm: branch {} is {} but residual {} is {}", branch.shape(), branch.dtype(),
             residual.shape(), residual.dtype());
    TG_CHECK(branch.shape() == residual.shape(), ShapeError,
             "add_rms_norm: residual {} and branch {} must have the same shape", residual.shape(),
             branch.shape());
    const DType ct = detail::compute_type(residual.dtype());
    if (ct != residual.dtype()) {
      // float16/bfloat16: the residual stream is stored in the model's dtype, so h is
      // rounded after the add, and the norm reads the rounded h.
      const Tensor h = detail::binary_map(residual, branch, "add_rms_norm",
                                          [](auto a, auto b) { return a + b; });
      Normalized n = normalize(h, weight, eps);
      ctx.save_for_backward(h, weight, n.rstd);
      return {n.y, h};
    }
    const Rows n(residual);
    const Tensor rc = detail::as_compute(residual, ct), bc = detail::as_compute(branch, ct);
    const Tensor wc = detail::as_compute(weight, ct);
    Tensor h = empty(residual.shape(), ct), y = empty(residual.shape(), ct);
    Tensor rstd = empty({n.rows}, ct);
    detail::visit_compute(ct, [&]<class F>() {
      kernels::add_rms_norm_forward.get<F>()(rc.data<F>(), bc.data<F>(), wc.data<F>(), h.data<F>(),
                                             y.data<F>(), rstd.data<F>(), n.rows, n.cols,
                                             static_cast<F>(eps));
    });
    ctx.save_for_backward(h, weight, rstd);
    return {y, h};
  }
  // h = residual + branch passes dh unchanged to both inputs: the same tensor goes into both
  // slots (the engine copies before it ever adds into a gradient it does not own).
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &h = saved[0], &weight = saved[1], &rstd = saved[2];
    const DType ct = rstd.dtype();
    const Rows n(h);
    const Tensor gc = detail::as_compute(g[0], ct), dh_out = detail::as_compute(g[1], ct);
    const Tensor hc = detail::as_compute(h, ct), wc = detail::as_compute(weight, ct);
    const bool need_dh = ctx.needs_input_grad(0) || ctx.needs_input_grad(1);
    // One dh for two inputs, so never one input's .grad: a buffer of its own.
    const GradBuffer dh{need_dh ? empty(h.shape(), ct) : Tensor(), false};
    const GradBuffer dw = ctx.grad_buffer(2, weight.shape(), ct);
    detail::visit_compute(ct, [&]<class F>() {
      kernels::add_rms_norm_backward.get<F>()(gc.data<F>(), dh_out.data<F>(), hc.data<F>(),
                                              wc.data<F>(), rstd.data<F>(), detail::grad_out<F>(dh),
                                              detail::grad_out<F>(dw), n.rows, n.cols);
    });
    const Tensor dh_rounded = detail::finish_grad(dh, h.dtype());
    return {ctx.needs_input_grad(0) ? dh_rounded : Tensor(),
            ctx.needs_input_grad(1) ? dh_rounded : Tensor(),
            detail::finish_grad(dw, weight.dtype())};
  }
};

}  // namespace

constinit kernels::KernelPair<kernels::RmsNormForward, float, double> kernels::rms_norm_forward{
    tg::rms_norm_forward<float>, tg::rms_norm_forward<double>};
constinit kernels::KernelPair<kernels::RmsNormBackward, float, double> kernels::rms_norm_backward{
    tg::rms_norm_backward<float>, tg::rms_norm_backward<double>};
constinit kernels::KernelPair<kernels::AddRmsNormForward, float, double>
    kernels::add_rms_norm_forward{tg::add_rms_norm_forward<float>,
                                  tg::add_rms_norm_forward<double>};
constinit kernels::KernelPair<kernels::AddRmsNormBackward, float, double>
    kernels::add_rms_norm_backward{tg::add_rms_norm_backward<float>,
                                   tg::add_rms_norm_backward<double>};

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps, Here here) {
  return RmsNorm::apply_at(here, x, weight, eps);
}

AddRmsNormOutput add_rms_norm(const Tensor& residual, const Tensor& branch, const Tensor& weight,
                              double eps, Here here) {
  std::vector<Tensor> outs = AddRmsNorm::apply_at(here, residual, branch, weight, eps);
  return {outs[0], outs[1]};
}

}  // namespace tg
