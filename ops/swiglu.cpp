// ops/swiglu.cpp — swiglu(a, b) and silu_and_mul(x): the reference kernels forward and
// backward, then the Functions that record them.
// Tests: tests/ops/swiglu_test.cpp. Course: docs/course/05-activations.md.
//
// B = batch, T = time, C = channels, V = vocab; H = hidden width of the MLP.
//
// forward:   out = silu(a) * b
// backward:  a product of two factors, so by the product rule
//              db = dout * silu(a)
//              da = dout * b * silu'(a)
//            i.e. da is silu's own backward, applied to the gradient that reaches silu(a),
//            which is dout * b. The reference kernels call silu's reference kernels
//            (ops/activation.cpp) for both silu parts, one element at a time.
// Both need a and b, so both are saved; silu(a) is recomputed (cheaper than storing it).
//
// silu_and_mul is the same math on one tensor of last dim 2H read as rows [a_0..a_H-1 |
// b_0..b_H-1]: the kernel walks rows, and the backward writes da and db into the two halves
// of one dx row — no split, no concatenation, no extra tensor.
//
// The fast kernels (ops/fast/swiglu.cpp) vectorise one sweep over the elements.
#include "ops/swiglu.h"

#include "ops/activation.h"
#include "ops/compute.h"
#include "ops/elementwise.h"

namespace tg {
namespace {

using kernels::GradOut;

// ---------------------------------------------------------------- reference kernels
template <class F>
void swiglu_forward(const F* a, const F* b, F* out, int64_t rows, int64_t h, int64_t stride) {
  auto* const silu = kernels::silu_forward.of<F>().reference();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const int64_t i = r * stride + j;
      F s;
      silu(&a[i], &s, 1);
      out[r * h + j] = s * b[i];
    }
  }
}

template <class F>
void swiglu_backward(const F* a, const F* b, const F* dout, GradOut<F> da, GradOut<F> db,
                     int64_t rows, int64_t h, int64_t stride) {
  auto* const silu = kernels::silu_forward.of<F>().reference();
  auto* const silu_grad = kernels::silu_backward.of<F>().reference();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const int64_t i = r * stride + j;
      const F g = dout[r * h + j];
      if (da) {
        const F g_silu = g * b[i];  // the gradient reaching silu(a_i)
        silu_grad(&a[i], &g_silu, GradOut<F>{&da[i], da.add}, 1);
      }
      if (db) {
        F s;
        silu(&a[i], &s, 1);
        db.put(i, g * s);
      }
    }
  }
}

// ---------------------------------------------------------------- the Functions
// swiglu(a, b): a and b are separate tensors of one shape, seen as one row of n elements.
struct Swiglu : Function<Swiglu> {
  static constexpr std::string_view kName = "swiglu";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  static Tensor forward(Context<>& ctx, const Tensor& a, const Tensor& b) {
    detail::check_floating(a, "swiglu");
    detail::check_floating(b, "swiglu");
    detail::check_same_dtype(a, b, "swiglu");
    TG_CHECK(a.shape() == b.shape(), ShapeError,
             "swiglu: a {} and b {} must have the same shape (swiglu does not broadcast)",
             a.shape(), b.shape());
    const DType ct = detail::compute_type(a.dtype());
    ctx.save_for_backward(a, b);
    const int64_t n = a.numel();
    if (auto* bf16 = kernels::swiglu_forward_bf16.get(); bf16 && a.dtype() == kBFloat16) {
      const Tensor ac = a.contiguous(), bc = b.contiguous();
      Tensor out = empty(a.shape(), kBFloat16);
      bf16(ac.data<BFloat16>(), bc.data<BFloat16>(), out.data<BFloat16>(), 1, n, n);
      return out;
    }
    const Tensor ac = detail::as_compute(a, ct), bc = detail::as_compute(b, ct);
    Tensor out = empty(a.shape(), ct);
    detail::visit_compute(ct, [&]<class F>() {
      kernels::swiglu_forward.get<F>()(ac.data<F>(), bc.data<F>(), out.data<F>(), 1, n, n);
    });
    return detail::round_to(out, a.dtype());
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &a = saved[0], &b = saved[1];
    const DType ct = detail::compute_type(a.dtype());
    const int64_t n = a.numel();
    if (auto* bf16 = kernels::swiglu_backward_bf16.get();
        bf16 && a.dtype() == kBFloat16 && g[0].dtype() == kBFloat16) {
      // da and db come out bfloat16, rounded as they are computed (a bfloat16 input's .grad
      // is bfloat16: there is no float32 .grad to add into).
      const Tensor ac = a.contiguous(), bc = b.contiguous(), dout = g[0].contiguous();
      Tensor da = ctx.needs_input_grad(0) ? empty(a.shape(), kBFloat16) : Tensor();
      Tensor db = ctx.needs_input_grad(1) ? empty(b.shape(), kBFloat16) : Tensor();
      bf16(ac.data<BFloat16>(), bc.data<BFloat16>(), dout.data<BFloat16>(),
           da.defined() ? da.data<BFloat16>() : nullptr,
           db.defined() ? db.data<BFloat16>() : nullptr, 1, n, n);
      return {da, db};
    }
    const GradBuffer da = ctx.grad_buffer(0, a.shape(), ct);
    const GradBuffer db = ctx.grad_buffer(1, b.shape(), ct);
    const Tensor ac = detail::as_compute(a, ct), bc = detail::as_compute(b, ct);
    const Tensor dout = detail::as_compute(g[0], ct);
    detail::visit_compute(ct, [&]<class F>() {
      kernels::swiglu_backward.get<F>()(ac.data<F>(), bc.data<F>(), dout.data<F>(),
                                        detail::grad_out<F>(da), detail::grad_out<F>(db), 1, n, n);
    });
    return {detail::finish_grad(da, a.dtype()), detail::finish_grad(db, b.dtype())};
  }
};

// silu_and_mul(x): rows of [a | b], 2H wide.
struct SiluAndMul : Function<SiluAndMul> {
  static constexpr std::string_view kName = "silu_and_mul";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    detail::check_floating(x, "silu_and_mul");
    TG_CHECK(x.dim() >= 1, ShapeError,
             "silu_and_mul: x must have at least one dim to split, got a 0-d tensor");
    const int64_t width = x.size(-1);
    TG_CHECK(width % 2 == 0, ShapeError,
             "silu_and_mul: the last dim of x {} must be even to split into [a | b], got {}",
             x.shape(), width);
    const DType ct = detail::compute_type(x.dtype());
    ctx.save_for_backward(x);
    Shape out_shape = x.shape();
    out_shape[out_shape.size() - 1] = width / 2;
    const int64_t h = width / 2;
    const int64_t rows = h == 0 ? 0 : x.numel() / width;
    if (auto* bf16 = kernels::swiglu_forward_bf16.get(); bf16 && x.dtype() == kBFloat16) {
      const Tensor xc = x.contiguous();
      Tensor out = empty(out_shape, kBFloat16);
      const BFloat16* p = xc.data<BFloat16>();
      if (rows > 0) bf16(p, p + h, out.data<BFloat16>(), rows, h, 2 * h);
      return out;
    }
    const Tensor xc = detail::as_compute(x, ct);
    Tensor out = empty(out_shape, ct);
    if (rows > 0) {  // (no pointer arithmetic on null)
      detail::visit_compute(ct, [&]<class F>() {
        const F* p = xc.data<F>();
        kernels::swiglu_forward.get<F>()(p, p + h, out.data<F>(), rows, h, 2 * h);
      });
    }
    return detail::round_to(out, x.dtype());
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const DType ct = detail::compute_type(x.dtype());
    const int64_t h = x.size(-1) / 2;
    const int64_t rows = h == 0 ? 0 : g[0].numel() / h;
    if (auto* bf16 = kernels::swiglu_backward_bf16.get();
        bf16 && x.dtype() == kBFloat16 && g[0].dtype() == kBFloat16) {
      // dx comes out bfloat16, rounded as it is computed: the float32 buffer below could only
      // ever be a new one here (a bfloat16 input's .grad is bfloat16, never float32).
      if (!ctx.needs_input_grad(0)) return {Tensor()};
      Tensor dx = empty(x.shape(), kBFloat16);
      if (rows > 0) {
        const Tensor xc = x.contiguous(), dout = g[0].contiguous();
        const BFloat16* p = xc.data<BFloat16>();
        BFloat16* d = dx.data<BFloat16>();
        bf16(p, p + h, dout.data<BFloat16>(), d, d + h, rows, h, 2 * h);
      }
      return {dx};
    }
    const GradBuffer dx = ctx.grad_buffer(0, x.shape(), ct);
    const Tensor xc = detail::as_compute(x, ct), dout = detail::as_compute(g[0], ct);
    if (rows > 0) {
      detail::visit_compute(ct, [&]<class F>() {
        const F* p = xc.data<F>();
        const GradOut<F> da = detail::grad_out<F>(dx);  // the a half of each row of dx
        const GradOut<F> db = da ? GradOut<F>{da.data + h, da.add} : GradOut<F>{};
        kernels::swiglu_backward.get<F>()(p, p + h, dout.data<F>(), da, db, rows, h, 2 * h);
      });
    }
    return {detail::finish_grad(dx, x.dtype())};
  }
};

}  // namespace

constinit kernels::Kernel<kernels::SwigluForwardBF16> kernels::swiglu_forward_bf16{nullptr};
constinit kernels::Kernel<kernels::SwigluBackwardBF16> kernels::swiglu_backward_bf16{nullptr};
constinit kernels::KernelPair<kernels::SwigluForward, float, double> kernels::swiglu_forward{
    tg::swiglu_forward<float>, tg::swiglu_forward<double>};
constinit kernels::KernelPair<kernels::SwigluBackward, float, double> kernels::swiglu_backward{
    tg::swiglu_backward<float>, tg::swiglu_backward<double>};

Tensor swiglu(const Tensor& a, const Tensor& b, Here here) { return Swiglu::apply_at(here, a, b); }
Tensor silu_and_mul(const Tensor& x, Here here) { return SiluAndMul::apply_at(here, x); }

}  // namespace tg
