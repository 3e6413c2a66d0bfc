// ops/softmax.cpp — softmax and log_softmax: plain kernels forward and backward, then the
// two Functions.
// Tests: tests/ops/softmax_test.cpp. Course: docs/course/07-softmax-cross-entropy.md.
//
// Shape legend: B = batch, T = time, C = channels, V = vocab. The op reduces along one dim
// of size n. Viewed contiguously, x is (outer, n, inner): outer = product of the dims before
// `dim`, inner = product of the dims after it. Slice (o, i) is the n elements
//   x[o * n * inner + k * inner + i],  k = 0 .. n-1
// (inner = 1 when dim is the last one, the common case: each slice is a contiguous row).
//
// Forward, per slice (m = max_k x_k; any constant can be subtracted, this one makes every
// exponent <= 0, so exp never overflows and the largest term is exactly 1):
//   s   = sum_k exp(x_k - m)
//   y_i = exp(x_i - m) / s                     softmax
//   y_i = x_i - m - log(s)                     log_softmax
//
// Backward of softmax. dy_i/dx_j = y_i * ([i = j] - y_j) (the Jacobian is diag(y) - y y^T),
// so the vector-Jacobian product never builds the n x n matrix:
//   dx_j = sum_i dout_i * y_i * ([i = j] - y_j) = y_j * (dout_j - sum_i dout_i * y_i)
// Backward of log_softmax. dy_i/dx_j = [i = j] - softmax_j = [i = j] - exp(y_j):
//   dx_j = sum_i dout_i * ([i = j] - exp(y_j)) = dout_j - exp(y_j) * sum_i dout_i
// Both are functions of the OUTPUT y alone: the forward saves y, not x.
//
// float16/bfloat16 are computed in float32 and rounded once. The saved output stays in
// float32 (the compute type) then, so the backward sees the same y the forward computed.
#include "ops/softmax.h"

#include <cmath>
#include <limits>

#include "core/factories.h"
#include "ops/compute.h"

namespace tg {
namespace {

using kernels::GradOut;

using detail::as_compute;
using detail::compute_type;
using detail::round_to;

// ---------------------------------------------------------------- reference kernels
// Contiguous (outer, n, inner) memory in the compute type F; no allocation.

/// y = softmax (or log_softmax when `log`) of every slice of x along the middle dim.
template <class F>
void softmax_forward(const F* x, F* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  // exercise softmax.forward: begin
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const F* xs = x + o * n * inner + i;  // element k of the slice is xs[k * inner]
      F* ys = y + o * n * inner + i;
      F m = -std::numeric_limits<F>::infinity();  // the slice's max
      for (int64_t k = 0; k < n; ++k) m = std::max(m, xs[k * inner]);
      if (m == -std::numeric_limits<F>::infinity()) m = 0;  // all -inf: 0 / 0 = nan, as PyTorch
      F s = 0;
      for (int64_t k = 0; k < n; ++k) s += std::exp(xs[k * inner] - m);
      if (log) {
        const F log_s = std::log(s);
        for (int64_t k = 0; k < n; ++k) ys[k * inner] = xs[k * inner] - m - log_s;
      } else {
        for (int64_t k = 0; k < n; ++k) ys[k * inner] = std::exp(xs[k * inner] - m) / s;
      }
    }
  }
  // exercise softmax.forward: end
}

/// dx from dout and the saved output y, per slice: the backward derived at the top of the
/// file, of softmax, or of log_softmax when `log`.
template <class F>
void softmax_backward(const F* dout, const F* y, GradOut<F> dx, int64_t outer, int64_t n,
                      int64_t inner, bool log) {
  kernels::zero_unless_adding(dx, outer * n * inner);
  // exercise softmax.backward: begin
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      const F* gs = dout + base;
      const F* ys = y + base;
      F* dxs = dx.data + base;
      F dot = 0;  // sum(dout * y) for softmax, sum(dout) for log_softmax
      for (int64_t k = 0; k < n; ++k) dot += log ? gs[k * inner] : gs[k * inner] * ys[k * inner];
      for (int64_t k = 0; k < n; ++k) {
        const int64_t j = k * inner;
        dxs[j] += log ? gs[j] - std::exp(ys[j]) * dot : ys[j] * (gs[j] - dot);
      }
    }
  }
  // exercise softmax.backward: end
}

// ---------------------------------------------------------------- helpers
/// x seen as (outer, n, inner) around dim `d` (a 0-d x is one slice of one element).
struct Slices {
  int64_t outer = 1, n = 1, inner = 1;
};

Slices slices_of(const Shape& shape, size_t d) {
  Slices s;
  if (shape.empty()) return s;
  for (size_t k = 0; k < d; ++k) s.outer *= shape[k];
  s.n = shape[d];
  for (size_t k = d + 1; k < shape.size(); ++k) s.inner *= shape[k];
  return s;
}

struct SoftmaxState {
  Slices slices;
  DType dtype = kFloat32;  // the input's dtype, to round dx to
};

/// Checks x and dim; returns dim wrapped into [0, rank) (0 for a 0-d x, as PyTorch).
size_t checked_dim(const char* op, const Tensor& x, int64_t dim) {
  TG_CHECK(is_floating_point(x.dtype()), DTypeError, "{}: x {} must be floating point, got {}", op,
           x.shape(), x.dtype());
  const size_t rank = std::max<size_t>(x.dim(), 1);
  TG_CHECK(dim >= -static_cast<int64_t>(rank) && dim < static_cast<int64_t>(rank), IndexError,
           "{}: dim {} is out of range for x {} (expected [{}, {}])", op, dim, x.shape(),
           -static_cast<int64_t>(rank), rank - 1);
  return static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(rank) : dim);
}

/// The forward of both ops: returns y in the compute type (saved) and rounded (returned).
Tensor run_forward(Context<SoftmaxState>& ctx, const Tensor& x, size_t d, bool log) {
  const DType ct = compute_type(x.dtype());
  const Slices s = slices_of(x.shape(), d);
  const Tensor xc = as_compute(x, ct);
  Tensor y = empty(x.shape(), ct);
  visit_dtype(ct, [&]<class F>() {
    if constexpr (std::is_floating_point_v<F>) {
      softmax_forward(xc.data<F>(), y.data<F>(), s.outer, s.n, s.inner, log);
    }
  });
  ctx.state = {s, x.dtype()};
  ctx.save_for_backward(y);  // the output (in the compute type): the backward needs only it
  return round_to(y, x.dtype());
}

/// The backward of both ops, from the saved output.
std::vector<Tensor> run_backward(Context<SoftmaxState>& ctx, const std::vector<Tensor>& g,
                                 bool log) {
  if (!ctx.needs_input_grad(0)) return {Tensor()};
  const Tensor y = ctx.saved_tensors()[0];
  const Slices s = ctx.state.slices;
  const Tensor gc = as_compute(g[0], y.dtype());
  const GradBuffer dx = ctx.grad_buffer(0, y.shape(), y.dtype());
  detail::visit_compute(y.dtype(), [&]<class F>() {
    softmax_backward(gc.data<F>(), y.data<F>(), detail::grad_out<F>(dx), s.outer, s.n, s.inner,
                     log);
  });
  return {detail::finish_grad(dx, ctx.state.dtype)};
}

// ---------------------------------------------------------------- Functions
struct Softmax : Function<Softmax> {
  static constexpr std::string_view kName = "softmax";
  using State = SoftmaxState;
  // forward: y_i = exp(x_i - m) / sum_k exp(x_k - m) along dim
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim) {
    return run_forward(ctx, x, checked_dim("softmax", x, dim), /*log=*/false);
  }
  // forward was: y_i = exp(x_i) / sum_k exp(x_k)      so dy_i/dx_j = y_i * ([i = j] - y_j)
  // so:          dx_j = y_j * (dout_j - sum_i(dout_i * y_i))
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    return run_backward(ctx, g, /*log=*/false);
  }
};

struct LogSoftmax : Function<LogSoftmax> {
  static constexpr std::string_view kName = "log_softmax";
  using State = SoftmaxState;
  // forward: y_i = x_i - m - log(sum_k exp(x_k - m)) along dim
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim) {
    return run_forward(ctx, x, checked_dim("log_softmax", x, dim), /*log=*/true);
  }
  // forward was: y_i = x_i - log(sum_k exp(x_k))       so dy_i/dx_j = [i = j] - exp(y_j)
  // so:          dx_j = dout_j - exp(y_j) * sum_i(dout_i)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    return run_backward(ctx, g, /*log=*/true);
  }
};

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, Here here) { return Softmax::apply_at(here, x, dim); }

Tensor log_softmax(const Tensor& x, int64_t dim, Here here) {
  return LogSoftmax::apply_at(here, x, dim);
}

}  // namespace tg
