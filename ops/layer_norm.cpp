// ops/layer_norm.cpp — LayerNorm: the reference kernels forward and backward, then the
// Function.
// Tests: tests/ops/layer_norm_test.cpp. Course: docs/course/09-layer-norm.md.
//
// Shape legend: B = batch, T = time, C = channels. x is seen as `rows` rows of C channels
// (rows = product of the leading dims, e.g. B * T), each normalised on its own.
//
// Forward, per row (mu the mean, s the reciprocal standard deviation, "rstd"):
//   mu   = sum_c x_c / C
//   var  = sum_c (x_c - mu)^2 / C
//   s    = (var + eps)^(-1/2)
//   xh_c = (x_c - mu) * s                      ("x hat": mean 0, variance ~1)
//   y_c  = xh_c * w_c + b_c
// Backward. Write gh_c = dout_c * w_c, the gradient reaching xh_c. Then
//   dmu/dx_j   = 1/C
//   dvar/dx_j  = 2 (x_j - mu) / C   (the d(mu)/dx_j part is 2/C * sum_c (x_c - mu) * -1/C = 0)
//   ds/dx_j    = -1/2 (var + eps)^(-3/2) * dvar/dx_j = -s^3 (x_j - mu) / C = -s^2 xh_j / C
//   dxh_c/dx_j = ([c = j] - 1/C) * s + (x_c - mu) * ds/dx_j
//              = s * ([c = j] - 1/C - xh_c * xh_j / C)
//   dx_j = sum_c gh_c * dxh_c/dx_j
//        = s * (gh_j - mean_c(gh_c) - xh_j * mean_c(gh_c * xh_c))
//   dw_c = sum over rows of dout_c * xh_c,   db_c = sum over rows of dout_c
// Compared with RMSNorm (ops/rms_norm.cpp) there is one more term, -mean(gh): the gradient
// of the mean subtraction, which removes the component of gh common to the whole row.
//
// What is saved: x (an alias of the input: no new memory), and mean and rstd, two numbers
// per row. Saving xh instead would allocate a fresh (rows, C) tensor per call; recomputing
// xh = (x - mu) * s in backward costs one subtraction and one multiply per element.
#include "ops/layer_norm.h"

#include <cmath>

#include "core/factories.h"
#include "ops/compute.h"

namespace tg {
namespace {

using kernels::GradOut;
using kernels::zero_unless_adding;

using detail::as_compute;
using detail::compute_type;
using detail::round_to;

// ---------------------------------------------------------------- reference kernels
/// y (rows, C) = (x - mu) * s * w + b per row; mean (rows) = mu, rstd (rows) = s.
/// w and b may be null (w = 1, b = 0). All contiguous, in the compute type.
template <class F>
void layer_norm_forward(const F* x, const F* w, const F* b, F* y, F* mean, F* rstd, int64_t rows,
                        int64_t cols, F eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const F* xr = x + r * cols;
    F* yr = y + r * cols;
    F sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += xr[c];
    const F mu = sum / static_cast<F>(cols);
    F sum_sq = 0;  // two passes: sum((x - mu)^2) does not cancel like sum(x^2) - C * mu^2
    for (int64_t c = 0; c < cols; ++c) sum_sq += (xr[c] - mu) * (xr[c] - mu);
    const F s = F(1) / std::sqrt(sum_sq / static_cast<F>(cols) + eps);
    mean[r] = mu;
    rstd[r] = s;
    for (int64_t c = 0; c < cols; ++c) {
      const F xh = (xr[c] - mu) * s;
      yr[c] = (w ? xh * w[c] : xh) + (b ? b[c] : F(0));
    }
  }
}

/// dx, dw and db as derived at the top of the file. w may be null (w = 1); a null GradOut
/// skips that gradient.
template <class F>
void layer_norm_backward(const F* dout, const F* x, const F* w, const F* mean, const F* rstd,
                         GradOut<F> dx, GradOut<F> dw, GradOut<F> db, int64_t rows, int64_t cols) {
  zero_unless_adding(dx, rows * cols);
  zero_unless_adding(dw, cols);
  zero_unless_adding(db, cols);
  // exercise layer_norm.backward: begin
  for (int64_t r = 0; r < rows; ++r) {
    const F* gr = dout + r * cols;
    const F* xr = x + r * cols;
    const F mu = mean[r], s = rstd[r];
    if (dx) {
      F sum_gh = 0, sum_gh_xh = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const F gh = w ? gr[c] * w[c] : gr[c];
        sum_gh += gh;
        sum_gh_xh += gh * (xr[c] - mu) * s;
      }
      const F mean_gh = sum_gh / static_cast<F>(cols);
      const F mean_gh_xh = sum_gh_xh / static_cast<F>(cols);
      F* dxr = dx.data + r * cols;
      for (int64_t c = 0; c < cols; ++c) {
        const F gh = w ? gr[c] * w[c] : gr[c];
        dxr[c] += s * (gh - mean_gh - (xr[c] - mu) * s * mean_gh_xh);
      }
    }
    if (dw) {
      for (int64_t c = 0; c < cols; ++c) dw[c] += gr[c] * (xr[c] - mu) * s;
    }
    if (db) {
      for (int64_t c = 0; c < cols; ++c) db[c] += gr[c];
    }
  }
  // exercise layer_norm.backward: end
}

// ---------------------------------------------------------------- helpers
/// The data of t, or null when t is undefined (an absent weight/bias, an unneeded gradient).
template <class F>
F* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data<F>() : nullptr;
}

void check_param(const char* name, const Tensor& p, const Tensor& x) {
  if (!p.defined()) return;
  TG_CHECK(p.dtype() == x.dtype(), DTypeError,
           "layer_norm: {} {} is {} but x {} is {}; convert one with .to()", name, p.shape(),
           p.dtype(), x.shape(), x.dtype());
  TG_CHECK(p.dim() == 1 && p.size(0) == x.size(-1), ShapeError,
           "layer_norm: {} must be [C] = ({}) for x {}, got {} {}", name, x.size(-1), x.shape(),
           name, p.shape());
}

// ---------------------------------------------------------------- Function
struct LayerNorm : Function<LayerNorm> {
  static constexpr std::string_view kName = "layer_norm";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  struct State {
    bool has_weight = false;  // an undefined tensor cannot be saved: remember its absence
  };
  // forward: y_c = (x_c - mu) * s * w_c + b_c, mu = mean(x), s = (var(x) + eps)^(-1/2) per row
  static Tensor forward(Context<State>& ctx, const Tensor& x, const Tensor& weight,
                        const Tensor& bias, double eps) {
    TG_CHECK(is_floating_point(x.dtype()), DTypeError,
             "layer_norm: x {} must be floating point, got {}", x.shape(), x.dtype());
    TG_CHECK(x.dim() >= 1, ShapeError,
             "layer_norm: x must have at least 1 dim (..., C), got shape {}", x.shape());
    check_param("weight", weight, x);
    check_param("bias", bias, x);
    TG_CHECK(eps > 0, ValueError, "layer_norm: eps must be > 0, got {}", eps);
    const DType ct = compute_type(x.dtype());
    const int64_t cols = x.size(-1);
    const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
    const Tensor xc = as_compute(x, ct), wc = as_compute(weight, ct), bc = as_compute(bias, ct);
    Tensor y = empty(x.shape(), ct), mean = empty({rows}, ct), rstd = empty({rows}, ct);
    visit_dtype(ct, [&]<class F>() {
      if constexpr (std::is_floating_point_v<F>) {
        layer_norm_forward(xc.data<F>(), ptr_or_null<F>(wc), ptr_or_null<F>(bc), y.data<F>(),
                           mean.data<F>(), rstd.data<F>(), rows, cols, static_cast<F>(eps));
      }
    });
    // x is an alias (free); mean and rstd are two numbers per row; bias is not needed.
    ctx.state.has_weight = weight.defined();
    if (weight.defined()) ctx.save_for_backward(x, mean, rstd, weight);
    else ctx.save_for_backward(x, mean, rstd);
    return round_to(y, x.dtype());
  }
  // backward: the derivation at the top of the file
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &x = saved[0], &mean = saved[1], &rstd = saved[2];
    const Tensor weight = ctx.state.has_weight ? saved[3] : Tensor();  // absent: w = 1
    const DType ct = compute_type(x.dtype());
    const int64_t cols = x.size(-1);
    const int64_t rows = mean.numel();
    const Tensor gc = as_compute(g[0], ct), xc = as_compute(x, ct), wc = as_compute(weight, ct);
    const Shape param_shape{cols};
    const GradBuffer dx = ctx.grad_buffer(0, x.shape(), ct);
    const GradBuffer dw = ctx.grad_buffer(1, param_shape, ct);
    const GradBuffer db = ctx.grad_buffer(2, param_shape, ct);
    detail::visit_compute(ct, [&]<class F>() {
      layer_norm_backward(gc.data<F>(), xc.data<F>(), ptr_or_null<F>(wc), mean.data<F>(),
                          rstd.data<F>(), detail::grad_out<F>(dx), detail::grad_out<F>(dw),
                          detail::grad_out<F>(db), rows, cols);
    });
    return {detail::finish_grad(dx, x.dtype()), detail::finish_grad(dw, x.dtype()),
            detail::finish_grad(db, x.dtype())};
  }
};

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                  Here here) {
  return LayerNorm::apply_at(here, x, weight, bias, eps);
}

}  // namespace tg
