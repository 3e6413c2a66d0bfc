// ops/mse_loss.cpp — mse_loss: the reference kernels forward and backward, then the Function.
// Tests: tests/ops/mse_loss_test.cpp. Course: docs/course/04-linear.md.
//
// Shapes: input and target are both (...), any rank, the same shape; N = numel.
//
//   forward:  d_i = x_i - t_i
//             none: L_i = d_i^2      sum: L = sum_i d_i^2      mean: L = sum_i d_i^2 / N
//
// Backward, from dL (a scalar for sum and mean, one value per element for none):
//   d(d_i^2)/dx_i = 2 d_i and d(d_i^2)/dt_i = -2 d_i, so with s = 1/N for mean, else 1:
//             dx_i = dL_i * 2 s d_i          dt_i = -dx_i
// Backward needs only d, so the forward saves d (one tensor) instead of x and t (two).
#include "ops/mse_loss.h"

#include "ops/compute.h"

#include "ops/elementwise.h"

namespace tg {
namespace {

enum class MseReduction { Mean, Sum, None };

MseReduction parse_mse_reduction(std::string_view r) {
  if (r == "mean") return MseReduction::Mean;
  if (r == "sum") return MseReduction::Sum;
  TG_CHECK(r == "none", ValueError,
           "mse_loss: unknown reduction '{}' (expected 'mean', 'sum' or 'none')", r);
  return MseReduction::None;
}

// ---------------------------------------------------------------- reference kernels
// Contiguous, in the compute type C; no allocation.

/// diff_i = x_i - t_i; sq_i = diff_i^2 unless sq is null; returns sum_i diff_i^2.
template <class C>
C mse_forward(const C* x, const C* t, C* diff, C* sq, int64_t n) {
  C total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const C d = x[i] - t[i];
    diff[i] = d;
    if (sq != nullptr) sq[i] = d * d;
    total += d * d;
  }
  return total;
}

/// dx_i = dL_i * 2 s diff_i and dt_i = -dx_i; dL is read at i * dl_step (dl_step = 0 for a
/// scalar loss). A null dx or dt skips that gradient.
template <class C>
void mse_backward(const C* dl, int64_t dl_step, const C* diff, C s, kernels::GradOut<C> dx,
                  kernels::GradOut<C> dt, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const C g = dl[i * dl_step] * C(2) * s * diff[i];
    if (dx) dx.put(i, g);
    if (dt) dt.put(i, -g);
  }
}

// ---------------------------------------------------------------- Function
struct MseLoss : Function<MseLoss> {
  static constexpr std::string_view kName = "mse_loss";
  static constexpr AutocastRule kAutocast = AutocastRule::kInFloat32;  // core/autocast.h
  struct State {
    MseReduction reduction = MseReduction::Mean;
    DType dtype = kFloat32;  // of input and target: the dtype their gradients take
  };
  // forward: d = input - target; loss = d^2, sum(d^2) or sum(d^2) / N
  static Tensor forward(Context<State>& ctx, const Tensor& input, const Tensor& target,
                        std::string_view reduction) {
    const MseReduction r = parse_mse_reduction(reduction);
    TG_CHECK(input.shape() == target.shape(), ShapeError,
             "mse_loss: input {} and target {} must have the same shape", input.shape(),
             target.shape());
    detail::check_floating(input, "mse_loss");
    TG_CHECK(input.dtype() == target.dtype(), DTypeError,
             "mse_loss: input is {} but target is {}; convert one", dtype_name(input.dtype()),
             dtype_name(target.dtype()));
    const DType ct = detail::compute_type(input.dtype());
    const Tensor xc = detail::as_compute(input, ct), tc = detail::as_compute(target, ct);
    Tensor diff = empty(input.shape(), ct);
    Tensor out = r == MseReduction::None ? empty(input.shape(), ct) : empty({}, ct);
    const int64_t n = input.numel();
    visit_dtype(ct, [&]<class C>() {
      if constexpr (std::is_floating_point_v<C>) {
        C* sq = r == MseReduction::None ? out.data<C>() : nullptr;
        const C total = mse_forward(xc.data<C>(), tc.data<C>(), diff.data<C>(), sq, n);
        if (r == MseReduction::Sum) out.data<C>()[0] = total;
        if (r == MseReduction::Mean) out.data<C>()[0] = total / static_cast<C>(n);  // 0/0 = nan
      }
    });
    ctx.state = {r, input.dtype()};
    ctx.save_for_backward(diff);
    return detail::round_to(out, input.dtype());
  }
  // backward: dinput = dL * 2 s d, dtarget = -dinput (derived at the top of the file)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const Tensor diff = ctx.saved_tensors()[0];
    const DType ct = diff.dtype();
    const Tensor dl = detail::as_compute(g[0], ct);
    const GradBuffer dx = ctx.grad_buffer(0, diff.shape(), ct);
    const GradBuffer dt = ctx.grad_buffer(1, diff.shape(), ct);
    const int64_t n = diff.numel();
    const MseReduction r = ctx.state.reduction;
    detail::visit_compute(ct, [&]<class C>() {
      const C s = r == MseReduction::Mean ? C(1) / static_cast<C>(n) : C(1);
      mse_backward(dl.data<C>(), r == MseReduction::None ? 1 : 0, diff.data<C>(), s,
                   detail::grad_out<C>(dx), detail::grad_out<C>(dt), n);
    });
    return {detail::finish_grad(dx, ctx.state.dtype), detail::finish_grad(dt, ctx.state.dtype)};
  }
};

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction, Here here) {
  return MseLoss::apply_at(here, input, target, reduction);
}

}  // namespace tg
