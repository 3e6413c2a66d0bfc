// ops/rope.cpp — rotary position embedding: the reference kernels forward and backward, then the
// Function.
// Tests: tests/ops/rope_test.cpp. Course: docs/course/11-rope.md.
//
// Shape legend: B = batch, H = heads, T = time, D = head dim, h = D / 2. x is seen as `rows`
// rows of D channels (rows = product of the leading dims, e.g. B * H * T), and every row has
// one position p (positions broadcast to x's leading dims).
//
// Forward, per row and pair i < h (the "rotate-half" pairing (i, i + h)):
//   a_i       = p * theta^(-2i/D)
//   y_i       = x_i cos(a_i) - x_{i+h} sin(a_i)
//   y_{i+h}   = x_{i+h} cos(a_i) + x_i sin(a_i)
// i.e. (y_i, y_{i+h}) = R(a_i) (x_i, x_{i+h}) with the 2x2 rotation R(a) = [[c, -s], [s, c]].
// Backward: y is linear in x, so dx = J^T dout with J the block of rotations; per pair
//   dx_i     = dy_i/dx_i * dout_i + dy_{i+h}/dx_i * dout_{i+h}         = c dout_i + s dout_{i+h}
//   dx_{i+h} = dy_i/dx_{i+h} * dout_i + dy_{i+h}/dx_{i+h} * dout_{i+h} = -s dout_i + c dout_{i+h}
// which is R(a)^T = R(-a): the gradient is rotated back by the same angle. No tensor of x is
// needed, only the angles, so only the positions (an alias: free) and theta are saved.
//
// Angles in double: p * theta^(-2i/D) reaches thousands of radians for the first pairs of a
// long sequence (p = 5000, i = 1 of D = 64: a ~ 3750). A float32 near 3750 is off by up to
// 2^-12 ~ 2e-4, so a float32 angle would put an error of that size into cos and sin — far
// above float32's own 6e-8. Computed in double and rounded once, cos and sin are correct to
// the last float32 bit.
#include "ops/rope.h"

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
/// y (rows, D) = the rotate-half rotation of x (rows, D) by the angles whose cosines and
/// sines are cos, sin (rows, h). All contiguous, in the compute type.
template <class F>
void rope_forward(const F* x, const F* cos, const F* sin, F* y, int64_t rows, int64_t half) {
  for (int64_t r = 0; r < rows; ++r) {
    const F* xr = x + r * 2 * half;
    const F *cr = cos + r * half, *sr = sin + r * half;
    F* yr = y + r * 2 * half;
    for (int64_t i = 0; i < half; ++i) {
      const F x1 = xr[i], x2 = xr[i + half];
      yr[i] = x1 * cr[i] - x2 * sr[i];
      yr[i + half] = x2 * cr[i] + x1 * sr[i];
    }
  }
}

/// dx (rows, D): dout rotated back by the same angles (the derivation at the top).
template <class F>
void rope_backward(const F* dout, const F* cos, const F* sin, GradOut<F> dx, int64_t rows,
                   int64_t half) {
  kernels::zero_unless_adding(dx, rows * 2 * half);
  // exercise rope.backward: begin
  for (int64_t r = 0; r < rows; ++r) {
    const F* gr = dout + r * 2 * half;
    const F *cr = cos + r * half, *sr = sin + r * half;
    F* dxr = dx.data + r * 2 * half;
    for (int64_t i = 0; i < half; ++i) {
      const F g1 = gr[i], g2 = gr[i + half];
      dxr[i] += g1 * cr[i] + g2 * sr[i];
      dxr[i + half] += g2 * cr[i] - g1 * sr[i];
    }
  }
  // exercise rope.backward: end
}

/// cos and sin (rows, h) of a = p * theta^(-2i/D) for the int64 positions p (rows), computed
/// in double and rounded once to F.
template <class F>
void angle_table_kernel(const int64_t* pos, F* cos, F* sin, int64_t rows, int64_t half,
                        double theta) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < half; ++i) {
      const double inv_freq =
          std::pow(theta, -static_cast<double>(2 * i) / static_cast<double>(2 * half));
      const double a = static_cast<double>(pos[r]) * inv_freq;
      cos[r * half + i] = static_cast<F>(std::cos(a));
      sin[r * half + i] = static_cast<F>(std::sin(a));
    }
  }
}

// ---------------------------------------------------------------- helpers
/// The leading dims of x (..., T, D): the shape positions are broadcast to.
Shape row_shape(const Shape& x_shape) {
  Shape rows;
  for (size_t d = 0; d + 1 < x_shape.size(); ++d) rows.push_back(x_shape[d]);
  return rows;
}

void check_args(const Tensor& x, const Tensor& positions, double theta) {
  TG_CHECK(is_floating_point(x.dtype()), DTypeError, "rope: x {} must be floating point, got {}",
           x.shape(), x.dtype());
  TG_CHECK(x.dim() >= 2, ShapeError, "rope: x must have at least 2 dims (..., T, D), got shape {}",
           x.shape());
  TG_CHECK(x.size(-1) % 2 == 0, ShapeError,
           "rope: the last dim D of x {} must be even (pairs (i, i + D/2)), got D = {}", x.shape(),
           x.size(-1));
  TG_CHECK(positions.dtype() == kInt64, DTypeError, "rope: positions {} must be int64, got {}",
           positions.shape(), positions.dtype());
  TG_CHECK(positions.dim() >= 1 && positions.size(-1) == x.size(-2), ShapeError,
           "rope: positions {} must have T = {} entries (last dim) for x {}", positions.shape(),
           x.size(-2), x.shape());
  // Leading dims of positions, aligned to the right of x's leading dims, are 1 or equal.
  const Shape rows = row_shape(x.shape());
  bool broadcasts = positions.dim() <= rows.size();
  for (size_t d = 1; broadcasts && d <= positions.dim(); ++d) {
    const int64_t p = positions.shape()[positions.dim() - d], want = rows[rows.size() - d];
    broadcasts = p == 1 || p == want;
  }
  TG_CHECK(broadcasts, ShapeError,
           "rope: positions {} does not broadcast to the leading dims {} of x {}",
           positions.shape(), rows, x.shape());
  TG_CHECK(theta > 0, ValueError, "rope: theta must be > 0, got {}", theta);
}

struct Tables {
  Tensor cos, sin;  // (rows, h), in the compute type
};

/// The cos/sin tables for x's shape: one row of h angles per row of x.
Tables angle_tables(const Shape& x_shape, const Tensor& positions, double theta, DType ct) {
  const Tensor pos = as_compute(positions.expand(row_shape(x_shape)), kInt64);
  const int64_t half = x_shape.back() / 2, rows = pos.numel();
  Tables t{empty({rows, half}, ct), empty({rows, half}, ct)};
  visit_dtype(ct, [&]<class F>() {
    if constexpr (std::is_floating_point_v<F>) {
      angle_table_kernel(pos.data<int64_t>(), t.cos.data<F>(), t.sin.data<F>(), rows, half, theta);
    }
  });
  return t;
}

// ---------------------------------------------------------------- Function
struct Rope : Function<Rope> {
  static constexpr std::string_view kName = "rope";
  struct State {
    double theta = 0;
  };
  // forward: (y_i, y_{i+h}) = R(a_i) (x_i, x_{i+h}), a_i = p * theta^(-2i/D)
  static Tensor forward(Context<State>& ctx, const Tensor& x, const Tensor& positions,
                        double theta) {
    check_args(x, positions, theta);
    const DType ct = compute_type(x.dtype());
    const Tables t = angle_tables(x.shape(), positions, theta, ct);
    const Tensor xc = as_compute(x, ct);
    Tensor y = empty(x.shape(), ct);
    visit_dtype(ct, [&]<class F>() {
      if constexpr (std::is_floating_point_v<F>) {
        rope_forward(xc.data<F>(), t.cos.data<F>(), t.sin.data<F>(), y.data<F>(), t.cos.size(0),
                     t.cos.size(1));
      }
    });
    ctx.save_for_backward(positions);  // the angles are recomputed from these in backward
    ctx.state.theta = theta;
    return round_to(y, x.dtype());
  }
  // forward was: (y_i, y_{i+h}) = R(a) (x_i, x_{i+h}) with R(a) = [[c, -s], [s, c]]
  // so:          (dx_i, dx_{i+h}) = R(a)^T (dout_i, dout_{i+h})   (derived at the top)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const Tensor positions = ctx.saved_tensors()[0];
    const DType dtype = g[0].dtype(), ct = compute_type(dtype);
    const Tables t = angle_tables(g[0].shape(), positions, ctx.state.theta, ct);
    const Tensor gc = as_compute(g[0], ct);
    const GradBuffer dx = ctx.grad_buffer(0, g[0].shape(), ct);
    detail::visit_compute(ct, [&]<class F>() {
      rope_backward(gc.data<F>(), t.cos.data<F>(), t.sin.data<F>(), detail::grad_out<F>(dx),
                    t.cos.size(0), t.cos.size(1));
    });
    return {detail::finish_grad(dx, dtype), Tensor()};
  }
};

}  // namespace

Tensor rope(const Tensor& x, const Tensor& positions, double theta, Here here) {
  return Rope::apply_at(here, x, positions, theta);
}

}  // namespace tg
