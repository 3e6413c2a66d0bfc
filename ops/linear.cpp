// ops/linear.cpp — linear: the plain kernels forward and backward, then the Function.
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
#include "ops/linear.h"

#include <algorithm>
#include <vector>

#include "ops/elementwise.h"
#include "ops/gemm.h"
#include "ops/reference_kernels.h"
#include "ops/vectorize.h"

namespace tg {
namespace {

// ---------------------------------------------------------------- raw kernels
// Contiguous, row-major, all in the compute type C; no allocation.

/// y (N, O) = x (N, I) W^T (O, I) + b (O); b may be null. Each y_no is a dot product of
/// two contiguous rows, x_n and W_o, which is why Linear keeps W as (out, in).
template <class C>
void linear_forward_kernel(const C* x, const C* w, const C* b, C* y, int64_t n_rows, int64_t in,
                           int64_t out) {
  for (int64_t n = 0; n < n_rows; ++n) {
    const C* x_row = x + n * in;
    for (int64_t o = 0; o < out; ++o) {
      const C* w_row = w + o * in;
      C acc = b != nullptr ? b[o] : C(0);
      for (int64_t i = 0; i < in; ++i) acc += x_row[i] * w_row[i];
      y[n * out + o] = acc;
    }
  }
}

/// dx += dy W, dW += dy^T x, db += sum_n dy; a null output pointer skips that gradient.
/// All three loops run n-o-i, so the innermost loop walks contiguous rows of W, x, dx, dW.
template <class C>
void linear_backward_kernel(const C* dy, const C* x, const C* w, C* dx, C* dw, C* db,
                            int64_t n_rows, int64_t in, int64_t out) {
  // exercise linear.backward: begin
  for (int64_t n = 0; n < n_rows; ++n) {
    const C* x_row = x + n * in;
    C* dx_row = dx != nullptr ? dx + n * in : nullptr;
    for (int64_t o = 0; o < out; ++o) {
      const C g = dy[n * out + o];
      if (db != nullptr) db[o] += g;
      if (dx_row != nullptr) {
        const C* w_row = w + o * in;
        for (int64_t i = 0; i < in; ++i) dx_row[i] += g * w_row[i];
      }
      if (dw != nullptr) {
        C* dw_row = dw + o * in;
        for (int64_t i = 0; i < in; ++i) dw_row[i] += g * x_row[i];
      }
    }
  }
  // exercise linear.backward: end
}

// ---------------------------------------------------------------- fast kernels
// The same three products through the blocked gemm (ops/gemm.h), which reads W^T and dy^T
// in place: y = x W^T is the NT case, dx = dy W is NN, dW = dy^T x is TN. Used unless the
// reference kernels are switched on (ops/reference_kernels.h). Outputs need no zeroing.

/// y = x W^T + b: y starts as b in every row, then gemm adds x W^T to it (beta = 1).
template <class C>
void linear_forward_fast(const C* x, const C* w, const C* b, C* y, int64_t n_rows, int64_t in,
                         int64_t out) {
  if (b != nullptr) {
    for (int64_t n = 0; n < n_rows; ++n) std::copy(b, b + out, y + n * out);
  }
  gemm(false, true, n_rows, out, in, C(1), x, in, w, in, b != nullptr ? C(1) : C(0), y, out);
}

/// db = sum_n dy: each row of dy is added into all of db at once, a vector of columns per
/// instruction (ops/vectorize.h); every db_o still adds its rows in the order n = 0, 1, ...
template <class C>
[[gnu::noinline]] void column_sums(const C* __restrict dy, C* __restrict db, int64_t n_rows,
                                   int64_t out) {
  std::fill(db, db + out, C(0));
  for (int64_t n = 0; n < n_rows; ++n) {
    const C* __restrict row = dy + n * out;
    detail::simd_for(out, [&](int64_t o) { db[o] += row[o]; });
  }
}

/// Which of dx, dW, db the fast backward adds into (an existing .grad) instead of writing.
struct AddInto {
  bool x = false, w = false, b = false;
};

/// dx = dy W, dW = dy^T x, db = sum_n dy; each written, or added into what it holds (gemm's
/// beta = 1) where `add` says so; null skips one.
template <class C>
void linear_backward_fast(const C* dy, const C* x, const C* w, C* dx, C* dw, C* db, int64_t n_rows,
                          int64_t in, int64_t out, AddInto add) {
  if (dx != nullptr)
    gemm(false, false, n_rows, in, out, C(1), dy, out, w, in, C(add.x ? 1 : 0), dx, in);
  if (dw != nullptr)
    gemm(true, false, out, in, n_rows, C(1), dy, out, x, in, C(add.w ? 1 : 0), dw, in);
  if (db != nullptr && !add.b) column_sums(dy, db, n_rows, out);
  if (db != nullptr && add.b) {  // the whole sum first, then one addition, as the engine would
    std::vector<C> sum(static_cast<size_t>(out));
    column_sums(dy, sum.data(), n_rows, out);
    for (int64_t o = 0; o < out; ++o) db[o] += sum[static_cast<size_t>(o)];
  }
}

// ---------------------------------------------------------------- helpers
DType compute_dtype(DType d) { return d == kFloat64 ? kFloat64 : kFloat32; }

/// N: the product of x's leading dims (x viewed as an (N, in_features) matrix).
int64_t rows_of(const Tensor& x) {
  int64_t n = 1;
  for (size_t d = 0; d + 1 < x.dim(); ++d) n *= x.shape()[d];
  return n;
}

/// A contiguous copy (or alias) of t in dtype ct, for the kernels.
Tensor prepared(const Tensor& t, DType ct) { return t.dtype() == ct ? t.contiguous() : t.to(ct); }

/// t (in the compute type) rounded to `dtype`, unless it already is.
Tensor finished(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

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

// ---------------------------------------------------------------- Function
struct Linear : Function<Linear> {
  static constexpr std::string_view kName = "linear";
  static constexpr bool kAddsIntoGrad = true;  // see Context::grad_destination
  struct State {
    bool has_bias = false;
  };
  // forward: y = x W^T + b, with x flattened to (N, I)
  static Tensor forward(Context<State>& ctx, const Tensor& x, const Tensor& w, const Tensor& b) {
    check_args(x, w, b);
    const DType ct = compute_dtype(x.dtype());
    const int64_t in = w.size(1), out = w.size(0), n_rows = rows_of(x);
    Shape y_shape = x.shape();
    y_shape[y_shape.size() - 1] = out;
    const Tensor xc = prepared(x, ct), wc = prepared(w, ct);
    const Tensor bc = b.defined() ? prepared(b, ct) : Tensor();
    Tensor y = empty(y_shape, ct);
    visit_dtype(ct, [&]<class C>() {
      if constexpr (std::is_floating_point_v<C>) {
        const auto kernel = reference_kernels() ? linear_forward_kernel<C> : linear_forward_fast<C>;
        kernel(xc.data<C>(), wc.data<C>(), b.defined() ? bc.data<C>() : nullptr, y.data<C>(),
               n_rows, in, out);
      }
    });
    ctx.state.has_bias = b.defined();
    ctx.save_for_backward(x, w);
    return finished(y, x.dtype());
  }
  // backward: dx = dy W, dW = dy^T x, db = sum over every leading dim of dy
  //           (derived at the top of the file; one kernel computes whichever are needed)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &x = saved[0], &w = saved[1];
    const DType ct = compute_dtype(x.dtype());
    const int64_t in = w.size(1), out = w.size(0), n_rows = rows_of(x);
    const bool need_x = ctx.needs_input_grad(0), need_w = ctx.needs_input_grad(1);
    const bool need_b = ctx.state.has_bias && ctx.needs_input_grad(2);
    const Tensor dy = prepared(g[0], ct), xc = prepared(x, ct), wc = prepared(w, ct);
    const bool reference = reference_kernels();
    // The fast kernel adds straight into an input's .grad when the engine offers it (the GEMM
    // with beta = 1: no gradient-sized temporary written, then read again to be added). The
    // .grad must be in the compute type and share no memory with what the kernel reads.
    auto destination = [&](size_t i) {
      const Tensor into = ctx.grad_destination(i);
      const bool usable = !reference && into.defined() && into.dtype() == ct &&
                          into.storage() != dy.storage() && into.storage() != xc.storage() &&
                          into.storage() != wc.storage();
      return usable ? into : Tensor();
    };
    const Tensor into_x = need_x ? destination(0) : Tensor();
    const Tensor into_w = need_w ? destination(1) : Tensor();
    const Tensor into_b = need_b ? destination(2) : Tensor();
    // Otherwise the reference kernel accumulates into zeros; the fast one writes every element.
    auto make = [&](bool needed, const Tensor& into, const Shape& shape) {
      return !needed          ? Tensor()
             : into.defined() ? into
             : reference      ? zeros(shape, ct)
                              : empty(shape, ct);
    };
    Tensor dx = make(need_x, into_x, x.shape()), dw = make(need_w, into_w, w.shape()),
           db = make(need_b, into_b, {out});
    const AddInto add{into_x.defined(), into_w.defined(), into_b.defined()};
    visit_dtype(ct, [&]<class C>() {
      if constexpr (std::is_floating_point_v<C>) {
        C* dx_p = need_x ? dx.data<C>() : nullptr;
        C* dw_p = need_w ? dw.data<C>() : nullptr;
        C* db_p = need_b ? db.data<C>() : nullptr;
        if (reference) {
          linear_backward_kernel(dy.data<C>(), xc.data<C>(), wc.data<C>(), dx_p, dw_p, db_p, n_rows,
                                 in, out);
        } else {
          linear_backward_fast(dy.data<C>(), xc.data<C>(), wc.data<C>(), dx_p, dw_p, db_p, n_rows,
                               in, out, add);
        }
      }
    });
    // A gradient added into its .grad is returned as that .grad: "already delivered".
    const DType dt = x.dtype();
    auto result = [&](bool needed, const Tensor& into, const Tensor& d) {
      return !needed ? Tensor() : into.defined() ? into : finished(d, dt);
    };
    return {result(need_x, into_x, dx), result(need_w, into_w, dw), result(need_b, into_b, db)};
  }
};

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, Here here) {
  return Linear::apply_at(here, x, weight, bias);
}

}  // namespace tg
