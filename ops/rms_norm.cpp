// ops/rms_norm.cpp — RMSNorm: the plain kernels forward and backward, then two Functions.
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
#include "ops/rms_norm.h"

#include <cmath>

#include "core/factories.h"
#include "ops/compute.h"

namespace tg {
namespace {

using detail::as_compute;
using detail::compute_type;
using detail::copy_in;
using detail::round_to;

// ---------------------------------------------------------------- raw kernels
/// y (rows, C) = x * s * w per row, and rstd (rows) = s. All contiguous, in the compute type.
template <class F>
void rms_norm_forward_kernel(const F* x, const F* w, F* y, F* rstd, int64_t rows, int64_t cols,
                             F eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const F* xr = x + r * cols;
    F* yr = y + r * cols;
    F sum_sq = 0;
    for (int64_t c = 0; c < cols; ++c) sum_sq += xr[c] * xr[c];
    const F s = F(1) / std::sqrt(sum_sq / static_cast<F>(cols) + eps);
    rstd[r] = s;
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * s * w[c];
  }
}

/// dx += s * (dout * w - x * s^2 * sum_c(dout_c * w_c * x_c) / C) per row, and
/// dw += sum over rows of dout * x * s. Either of dx, dw may be null (not needed).
template <class F>
void rms_norm_backward_kernel(const F* dout, const F* x, const F* w, const F* rstd, F* dx, F* dw,
                              int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const F* gr = dout + r * cols;
    const F* xr = x + r * cols;
    const F s = rstd[r];
    if (dx != nullptr) {
      F dot = 0;  // sum_c(dout_c * w_c * x_c)
      for (int64_t c = 0; c < cols; ++c) dot += gr[c] * w[c] * xr[c];
      const F k = s * s * dot / static_cast<F>(cols);
      F* dxr = dx + r * cols;
      for (int64_t c = 0; c < cols; ++c) dxr[c] += s * (gr[c] * w[c] - xr[c] * k);
    }
    if (dw != nullptr) {
      for (int64_t c = 0; c < cols; ++c) dw[c] += gr[c] * xr[c] * s;
    }
  }
}

// ---------------------------------------------------------------- helpers
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

struct Normalized {
  Tensor y;     // in x's dtype
  Tensor rstd;  // (rows), in the compute type
};

/// The forward of both Functions: y = x * s * w with s = rstd per row.
Normalized normalize(const Tensor& x, const Tensor& weight, double eps) {
  const DType ct = compute_type(x.dtype());
  const int64_t cols = x.size(-1);
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  const Tensor xc = as_compute(x, ct), wc = as_compute(weight, ct);
  Tensor y = empty(x.shape(), ct), rstd = empty({rows}, ct);
  visit_dtype(ct, [&]<class F>() {
    if constexpr (std::is_floating_point_v<F>) {
      rms_norm_forward_kernel(xc.data<F>(), wc.data<F>(), y.data<F>(), rstd.data<F>(), rows, cols,
                              static_cast<F>(eps));
    }
  });
  return {round_to(y, x.dtype()), rstd};
}

struct NormGrads {
  Tensor dx;  // in the compute type, or undefined
  Tensor dw;  // in the compute type, or undefined
};

/// The backward of both Functions. dx starts from `dx_init` (a fresh compute-type buffer, or
/// undefined for zeros) and the kernel adds into it; dw is computed only when `need_dw`.
NormGrads normalize_backward(const Tensor& dout, const Tensor& x, const Tensor& weight,
                             const Tensor& rstd, bool need_dx, Tensor dx_init, bool need_dw) {
  const DType ct = compute_type(x.dtype());
  const int64_t cols = x.size(-1);
  const int64_t rows = rstd.numel();
  const Tensor gc = as_compute(dout, ct), xc = as_compute(x, ct), wc = as_compute(weight, ct);
  NormGrads out;
  if (need_dx) out.dx = dx_init.defined() ? dx_init : zeros(x.shape(), ct);
  if (need_dw) out.dw = zeros(weight.shape(), ct);
  visit_dtype(ct, [&]<class F>() {
    if constexpr (std::is_floating_point_v<F>) {
      rms_norm_backward_kernel(gc.data<F>(), xc.data<F>(), wc.data<F>(), rstd.data<F>(),
                               need_dx ? out.dx.data<F>() : nullptr,
                               need_dw ? out.dw.data<F>() : nullptr, rows, cols);
    }
  });
  return out;
}

// ---------------------------------------------------------------- Functions
struct RmsNorm : Function<RmsNorm> {
  static constexpr std::string_view kName = "rms_norm";
  // forward: y_c = x_c * s * w_c, s = (mean(x^2) + eps)^(-1/2) per row
  static Tensor forward(Context<>& ctx, const Tensor& x, const Tensor& weight, double eps) {
    check_args("rms_norm", x, weight, eps);
    Normalized n = normalize(x, weight, eps);
    ctx.save_for_backward(x, weight, n.rstd);  // rstd: one number per row, y not needed
    return n.y;
  }
  // forward was: out_c = x_c * s * w_c, with s = (mean(x^2) + eps)^(-1/2)
  // so:          dx_j = s * (dout_j * w_j - x_j * s^2 * sum_c(dout_c * w_c * x_c) / C)
  //              dw_c = sum over rows of dout_c * x_c * s
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &x = saved[0], &weight = saved[1], &rstd = saved[2];
    const NormGrads d = normalize_backward(g[0], x, weight, rstd, ctx.needs_input_grad(0), Tensor(),
                                           ctx.needs_input_grad(1));
    return {d.dx.defined() ? round_to(d.dx, x.dtype()) : Tensor(),
            d.dw.defined() ? round_to(d.dw, weight.dtype()) : Tensor()};
  }
};

struct AddRmsNorm : Function<AddRmsNorm> {
  static constexpr std::string_view kName = "add_rms_norm";
  // forward: h = x + residual (rounded to the dtype), out_c = h_c * s * w_c (s from h)
  // outputs: {out, h}
  static std::vector<Tensor> forward(Context<>& ctx, const Tensor& x, const Tensor& residual,
                                     const Tensor& weight, double eps) {
    check_args("add_rms_norm", x, weight, eps);
    TG_CHECK(residual.dtype() == x.dtype(), DTypeError,
             "add_rms_norm: residual {} is {} but x {} is {}", residual.shape(), residual.dtype(),
             x.shape(), x.dtype());
    TG_CHECK(residual.shape() == x.shape(), ShapeError,
             "add_rms_norm: x {} and residual {} must have the same shape", x.shape(),
             residual.shape());
    const DType ct = compute_type(x.dtype());
    Tensor h = copy_in(x, ct);
    const Tensor rc = as_compute(residual, ct);
    visit_dtype(ct, [&]<class F>() {
      if constexpr (std::is_floating_point_v<F>) {
        F* ph = h.data<F>();
        const F* pr = rc.data<F>();
        for (int64_t i = 0, n = h.numel(); i < n; ++i) ph[i] += pr[i];
      }
    });
    h = round_to(h, x.dtype());  // the residual stream is stored in the model's dtype
    Normalized n = normalize(h, weight, eps);
    ctx.save_for_backward(h, weight, n.rstd);
    return {n.y, h};
  }
  // forward was: h = x + residual; out_c = h_c * s * w_c, with s = (mean(h^2) + eps)^(-1/2)
  // h reaches the loss twice, through out and as the second output itself, so
  //   dh = (rms_norm's dx formula applied to dout, with h for x) + dh_out
  // and h = x + residual passes dh unchanged to both: dx = dresidual = dh.
  // The kernel accumulates (+=) into a buffer that starts as dh_out: the sum is free.
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &h = saved[0], &weight = saved[1], &rstd = saved[2];
    const bool need_dh = ctx.needs_input_grad(0) || ctx.needs_input_grad(1);
    const DType ct = compute_type(h.dtype());
    const NormGrads d =
        normalize_backward(g[0], h, weight, rstd, need_dh, need_dh ? copy_in(g[1], ct) : Tensor(),
                           ctx.needs_input_grad(2));
    const Tensor dh = need_dh ? round_to(d.dx, h.dtype()) : Tensor();
    // Two slots, two tensors: the engine may accumulate into one of them in place.
    const bool both = ctx.needs_input_grad(0) && ctx.needs_input_grad(1);
    return {ctx.needs_input_grad(0) ? dh : Tensor(),
            ctx.needs_input_grad(1) ? (both ? dh.clone() : dh) : Tensor(),
            d.dw.defined() ? round_to(d.dw, weight.dtype()) : Tensor()};
  }
};

}  // namespace

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps, Here here) {
  return RmsNorm::apply_at(here, x, weight, eps);
}

AddRmsNormOutput add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                              double eps, Here here) {
  std::vector<Tensor> outs = AddRmsNorm::apply_at(here, x, residual, weight, eps);
  return {outs[0], outs[1]};
}

}  // namespace tg
