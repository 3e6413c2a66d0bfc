// core/view_select.cpp — views that pick or stretch elements: narrow, slice, select, expand.
// Like every view (core/view.cpp) they compute new shape/strides/offset over the same
// storage and copy nothing.
//
// Forward, keeping the address of every element:
//   narrow/slice move the offset to the first kept element (and multiply the stride by
//     the step);
//   select moves the offset and drops the dim;
//   expand gives the stretched dims stride 0.
//
// Backward:
//   expand read each x element once per copy:      dx = sum_to(dout, x's shape);
//   narrow, slice, select picked some elements:    dx = zeros of x's shape, with dout
//                                                       written into the same view of it.
// Tests: tests/core/view_test.cpp, tests/core/view_grad_test.cpp. Course:
// docs/course/01-tensors.md.
#include <algorithm>
#include <optional>

#include "core/autograd.h"
#include "core/broadcast.h"
#include "core/factories.h"
#include "core/tensor.h"

namespace tg {
namespace {

// ---------------------------------------------------------------- the metadata (forward)
// These record nothing. They run inside a Function's forward or backward, where grad mode
// is off, so the one public call among them (clone, in reshape) records nothing either.
namespace raw {
Tensor expand(const Tensor& x, const Shape& target) {
  TG_CHECK(target.size() >= x.dim(), ShapeError,
           "expand: the target shape {} has fewer dims than the tensor's shape {}", target,
           x.shape());
  const size_t lead = target.size() - x.dim();
  Shape s(target.size(), 0);
  Strides st(target.size(), 0);
  for (size_t i = 0; i < target.size(); ++i) {
    if (i < lead) {  // new leading dims: read the same data again and again
      TG_CHECK(target[i] >= 0, ShapeError, "expand: size {} for new dim {} in {} must be >= 0",
               target[i], i, target);
      s[i] = target[i];
      st[i] = 0;
      continue;
    }
    const int64_t have = x.shape()[i - lead];
    const int64_t want = target[i] == -1 ? have : target[i];
    TG_CHECK(want == have || have == 1, ShapeError,
             "expand: cannot expand shape {} to {}: dim {} has size {} (only size-1 dims can grow)",
             x.shape(), target, i, have);
    s[i] = want;
    st[i] = want == have ? x.strides()[i - lead] : 0;
  }
  checked_numel(s, "expand");
  return make_view(x, std::move(s), std::move(st), x.storage_offset());
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  TG_CHECK(x.dim() > 0, ShapeError, "narrow: cannot narrow a 0-d tensor");
  const size_t d = wrap_dim(dim, x.dim(), "narrow");
  const int64_t n = x.shape()[d];
  if (start < 0 && start >= -n) start += n;  // PyTorch accepts a negative start
  TG_CHECK(start >= 0 && start <= n, IndexError,
           "narrow: start {} is out of range for dim {} of size {}", start, d, n);
  TG_CHECK(length >= 0 && length <= n - start, IndexError,
           "narrow: start {} + length {} exceeds dim {} of size {}", start, length, d, n);
  Shape s = x.shape();
  s[d] = length;
  return make_view(x, std::move(s), x.strides(), x.storage_offset() + start * x.strides()[d]);
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  TG_CHECK(x.dim() > 0, ShapeError, "slice: cannot slice a 0-d tensor");
  const size_t d = wrap_dim(dim, x.dim(), "slice");
  TG_CHECK(step > 0, ValueError, "slice: step must be positive, got {}", step);
  const int64_t n = x.shape()[d];
  // Python semantics: negatives count from the end, then clamp into [0, n].
  auto clamp = [n](int64_t i) { return std::clamp(i < 0 ? (i < -n ? 0 : i + n) : i, 0L, n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  Shape s = x.shape();
  Strides st = x.strides();
  // ceil((end - start) / step), written so that a huge step cannot overflow.
  s[d] = end == start ? 0 : (end - start - 1) / step + 1;
  // With 0 or 1 elements kept the dim is never stepped along, so its stride does not
  // matter: keep it, as a huge step would overflow stride * step (or the offset + stride
  // that loops over the dim compute). With 2 or more, step < size and the product fits.
  if (s[d] > 1) st[d] *= step;
  return make_view(x, std::move(s), std::move(st), x.storage_offset() + start * x.strides()[d]);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  TG_CHECK(x.dim() > 0, ShapeError, "select: cannot index into a 0-d tensor");
  const size_t d = wrap_dim(dim, x.dim(), "select");
  const int64_t n = x.shape()[d];
  TG_CHECK(index >= -n && index < n, IndexError,
           "select: index {} is out of range for dim {} of size {} (shape {})", index, d, n,
           x.shape());
  if (index < 0) index += n;
  Shape s = x.shape();
  Strides st = x.strides();
  s.erase(d);
  st.erase(d);
  return make_view(x, std::move(s), std::move(st), x.storage_offset() + index * x.strides()[d]);
}

}  // namespace raw

// ---------------------------------------------------------------- the Functions
// A Function's forward is the metadata above; `x` is always its only tensor input, so
// backward returns one slot.
using Grads = std::vector<Tensor>;

struct Expand : Function<Expand> {
  static constexpr std::string_view kName = "expand";
  struct State {
    Shape x_shape;
  };
  // forward: out[..., i, ...] = x[..., 0, ...] along every dim where x had size 1 (and
  // along new leading dims)
  static Tensor forward(Context<State>& ctx, const Tensor& x, const Shape& shape) {
    ctx.state.x_shape = x.shape();
    return raw::expand(x, shape);
  }
  // backward: each x element was read once per copy, so dx adds up the gradients of all
  // its copies: dx = sum_to(dout, x's shape)
  static Grads backward(Context<State>& ctx, const Grads& g) {
    return {ctx.needs_input_grad(0) ? sum_to(g[0], ctx.state.x_shape) : Tensor()};
  }
};

// The backward shared by narrow, slice and select: `pick` is the forward's view applied to
// another tensor of x's shape. It addresses the very elements out came from, so
//   forward was: out = pick(x)
//   so:          dx = zeros of x's shape, then pick(dx) = dout (no element is picked twice)
template <class Pick>
Tensor scatter_into_zeros(const Shape& x_shape, const Tensor& dout, Pick pick) {
  Tensor dx = zeros(x_shape, dout.dtype());
  pick(dx).copy_(dout);  // backward runs under NoGradGuard, and dx is a fresh tensor
  return dx;
}

struct Narrow : Function<Narrow> {
  static constexpr std::string_view kName = "narrow";
  struct State {
    Shape x_shape;
    int64_t dim = 0, start = 0, length = 0;
  };
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim, int64_t start,
                        int64_t length) {
    ctx.state = {x.shape(), dim, start, length};
    return raw::narrow(x, dim, start, length);
  }
  static Grads backward(Context<State>& ctx, const Grads& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const State& s = ctx.state;
    return {scatter_into_zeros(s.x_shape, g[0], [&](const Tensor& dx) {
      return raw::narrow(dx, s.dim, s.start, s.length);
    })};
  }
};

struct Slice : Function<Slice> {
  static constexpr std::string_view kName = "slice";
  struct State {
    Shape x_shape;
    int64_t dim = 0, start = 0, end = 0, step = 1;
  };
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim, int64_t start,
                        int64_t end, int64_t step) {
    ctx.state = {x.shape(), dim, start, end, step};
    return raw::slice(x, dim, start, end, step);
  }
  static Grads backward(Context<State>& ctx, const Grads& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const State& s = ctx.state;
    return {scatter_into_zeros(s.x_shape, g[0], [&](const Tensor& dx) {
      return raw::slice(dx, s.dim, s.start, s.end, s.step);
    })};
  }
};

struct Select : Function<Select> {
  static constexpr std::string_view kName = "select";
  struct State {
    Shape x_shape;
    int64_t dim = 0, index = 0;
  };
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim, int64_t index) {
    ctx.state = {x.shape(), dim, index};
    return raw::select(x, dim, index);
  }
  static Grads backward(Context<State>& ctx, const Grads& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const State& s = ctx.state;
    return {scatter_into_zeros(s.x_shape, g[0],
                               [&](const Tensor& dx) { return raw::select(dx, s.dim, s.index); })};
  }
};

}  // namespace

// ---------------------------------------------------------------- the public methods

Tensor Tensor::expand(const Shape& shape, Here here) const {
  return Expand::apply_at(here, *this, shape);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length, Here here) const {
  return Narrow::apply_at(here, *this, dim, start, length);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step, Here here) const {
  return Slice::apply_at(here, *this, dim, start, end, step);
}

Tensor Tensor::select(int64_t dim, int64_t index, Here here) const {
  return Select::apply_at(here, *this, dim, index);
}

}  // namespace tg
