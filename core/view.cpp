// core/view.cpp — views that regroup: view, reshape, flatten, unflatten, squeeze,
// unsqueeze, permute, transpose, t. A view is new shape/strides/offset over the same
// storage, no copying; core/view_select.cpp has the views that pick or stretch elements.
//
// Forward. Every view only computes metadata (the raw:: functions below). The rule that
// makes them correct: the address of an element must be the same before and after, so
//   transpose swaps two (size, stride) pairs;
//   unsqueeze inserts a size-1 dim (its stride is never used);
//   view finds strides for the new shape that address the same elements, if any exist.
//
// Backward. A view moves no numbers, it only changes which index names which element, so
// its backward sends each element of dout back to the index of x it came from:
//   view, reshape, flatten, unflatten, squeeze, unsqueeze keep the row-major order of the
//     elements and only regroup them into dims:  dx = dout regrouped into x's shape;
//   permute moved dim dims[i] to place i:         dx = dout permuted by the inverse;
//   transpose and t swapped two dims:              dx = dout with the same two swapped back.
// Each public method records its Function on the tape (when grad mode is on and x requires
// grad); the result is still a view of x's storage either way.
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

// Resolves a single -1 in `shape` so that it holds `numel` elements.
Shape infer_size(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  std::optional<size_t> infer;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TG_CHECK(!infer, ShapeError, "{}: only one dimension can be -1, got shape {}", op, shape);
      infer = i;
    } else {
      TG_CHECK(out[i] >= 0, ShapeError, "{}: invalid size {} in dim {} of shape {}", op, out[i], i,
               shape);
      TG_CHECK(!__builtin_mul_overflow(known, out[i], &known), ShapeError,
               "{}: shape {} has more elements than int64 can count", op, shape);
    }
  }
  if (infer) {
    TG_CHECK(known != 0, ShapeError,
             "{}: cannot infer the -1 in shape {} for a tensor of {} elements: with a 0 in the "
             "shape any size would fit",
             op, shape, numel);
    TG_CHECK(numel % known == 0, ShapeError, "{}: shape {} is invalid for a tensor of {} elements",
             op, shape, numel);
    out[*infer] = numel / known;
  } else {
    TG_CHECK(known == numel, ShapeError,
             "{}: shape {} ({} elements) is invalid for a tensor of {} elements", op, shape, known,
             numel);
  }
  return out;
}

// Strides that let `new_shape` address the same elements as (old_shape, old_strides), or
// nothing if no such strides exist. The old dims are cut into "chunks": runs of dims that
// are contiguous with each other (stride[i] == size[i+1] * stride[i+1]). Inside a chunk the
// memory is one arithmetic sequence, which any grouping of new dims can walk; a new dim
// may never straddle two chunks. So we match new dims to chunks from the right.
std::optional<Strides> view_strides(const Shape& old_shape, const Strides& old_strides,
                                    const Shape& new_shape) {
  Strides out(new_shape.size(), 0);
  int64_t numel = 1;
  for (int64_t d : old_shape) numel *= d;
  if (numel == 0 || old_shape.empty()) return contiguous_strides(new_shape);

  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();  // stride of the chunk's last dim
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    // A chunk ends at dim 0, or where the dim to its left is not contiguous with it.
    const bool chunk_ends =
        d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
      out[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;  // a new dim straddles two chunks
    if (d > 0) {
      chunk_base_stride = old_strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// ---------------------------------------------------------------- the metadata (forward)
// These record nothing. They run inside a Function's forward or backward, where grad mode
// is off, so the one public call among them (clone, in reshape) records nothing either.
namespace raw {

Tensor view(const Tensor& x, const Shape& new_shape) {
  const Shape s = infer_size(new_shape, x.numel(), "view");
  auto st = view_strides(x.shape(), x.strides(), s);
  TG_CHECK(st.has_value(), ShapeError,
           "view: shape {} is not compatible with the strides {} of this tensor of shape {} (some "
           "new dim would span non-adjacent memory); use .reshape(), which copies when needed",
           s, x.strides(), x.shape());
  return make_view(x, s, std::move(*st), x.storage_offset());
}

Tensor reshape(const Tensor& x, const Shape& new_shape) {
  const Shape s = infer_size(new_shape, x.numel(), "reshape");
  if (auto st = view_strides(x.shape(), x.strides(), s)) {
    return make_view(x, s, std::move(*st), x.storage_offset());
  }
  return view(x.clone(), s);
}

Tensor permute(const Tensor& x, const DimVec& dims) {
  TG_CHECK(dims.size() == x.dim(), ShapeError,
           "permute: got {} dims {} for a tensor of rank {} (shape {})", dims.size(), dims, x.dim(),
           x.shape());
  Shape s(x.dim(), 0);
  Strides st(x.dim(), 0);
  DimVec seen(x.dim(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    const size_t d = wrap_dim(dims[i], x.dim(), "permute");
    TG_CHECK(!seen[d], ShapeError, "permute: dim {} appears twice in {}", d, dims);
    seen[d] = 1;
    s[i] = x.shape()[d];
    st[i] = x.strides()[d];
  }
  return make_view(x, std::move(s), std::move(st), x.storage_offset());
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  const size_t a = wrap_dim(dim0, x.dim(), "transpose"), b = wrap_dim(dim1, x.dim(), "transpose");
  Shape s = x.shape();
  Strides st = x.strides();
  std::swap(s[a], s[b]);
  std::swap(st[a], st[b]);
  return make_view(x, std::move(s), std::move(st), x.storage_offset());
}

Tensor t(const Tensor& x) {
  TG_CHECK(x.dim() <= 2, ShapeError, "t: expects a tensor of at most 2 dims, got shape {}",
           x.shape());
  return x.dim() < 2 ? x : transpose(x, 0, 1);
}

Tensor squeeze(const Tensor& x) {
  Shape s;
  Strides st;
  for (size_t d = 0; d < x.dim(); ++d) {
    if (x.shape()[d] == 1) continue;
    s.push_back(x.shape()[d]);
    st.push_back(x.strides()[d]);
  }
  return make_view(x, std::move(s), std::move(st), x.storage_offset());
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  const size_t d = wrap_dim(dim, x.dim(), "squeeze");
  Shape s = x.shape();
  Strides st = x.strides();
  if (x.dim() > 0 && s[d] == 1) {
    s.erase(d);
    st.erase(d);
  }
  return make_view(x, std::move(s), std::move(st), x.storage_offset());
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  // The new dim may go anywhere from before the first dim to after the last.
  const int64_t r = static_cast<int64_t>(x.dim());
  TG_CHECK(dim >= -r - 1 && dim <= r, IndexError,
           "unsqueeze: dim {} is out of range for a tensor of rank {} (expected {} to {})", dim, r,
           -r - 1, r);
  const size_t d = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape s = x.shape();
  Strides st = x.strides();
  // Any stride works for a size-1 dim; PyTorch picks size*stride of the next dim.
  st.insert(d, d < x.dim() ? s[d] * st[d] : 1);
  s.insert(d, 1);
  return make_view(x, std::move(s), std::move(st), x.storage_offset());
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  const size_t a = wrap_dim(start_dim, x.dim(), "flatten");
  const size_t b = wrap_dim(end_dim, x.dim(), "flatten");
  if (x.dim() == 0) return reshape(x, {1});
  TG_CHECK(a <= b, ShapeError, "flatten: start_dim {} comes after end_dim {}", start_dim, end_dim);
  Shape s;
  for (size_t i = 0; i < a; ++i) s.push_back(x.shape()[i]);
  int64_t merged = 1;
  for (size_t i = a; i <= b; ++i) merged *= x.shape()[i];
  s.push_back(merged);
  for (size_t i = b + 1; i < x.dim(); ++i) s.push_back(x.shape()[i]);
  return reshape(x, s);
}

Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes) {
  TG_CHECK(x.dim() > 0, ShapeError, "unflatten: cannot unflatten a 0-d tensor");
  const size_t d = wrap_dim(dim, x.dim(), "unflatten");
  TG_CHECK(!sizes.empty(), ShapeError, "unflatten: sizes must not be empty");
  const Shape inner = infer_size(sizes, x.shape()[d], "unflatten");
  Shape s;
  for (size_t i = 0; i < d; ++i) s.push_back(x.shape()[i]);
  for (int64_t v : inner) s.push_back(v);
  for (size_t i = d + 1; i < x.dim(); ++i) s.push_back(x.shape()[i]);
  return view(x, s);
}

}  // namespace raw

// ---------------------------------------------------------------- the Functions
// A Function's forward is the metadata above; `x` is always its only tensor input, so
// backward returns one slot. (When a Function is recorded, x requires grad, so slot 0 is
// always wanted; the needs_input_grad check keeps the pattern of every op.)
using Grads = std::vector<Tensor>;

// Regroup<Op> is the backward shared by the views that keep x's elements in row-major
// order and only regroup them into dims (view, reshape, flatten, unflatten, squeeze,
// unsqueeze). Each op's forward stores x's shape in ctx.state.
//   forward was: out = x with its elements, in order, regrouped into a new shape
//   so:          dx = dout with its elements, in order, regrouped into x's shape
template <class Op>
struct Regroup : Function<Op> {
  struct State {
    Shape x_shape;
  };
  static Grads backward(Context<State>& ctx, const Grads& g) {
    return {ctx.needs_input_grad(0) ? raw::reshape(g[0], ctx.state.x_shape) : Tensor()};
  }
};

struct View : Regroup<View> {
  static constexpr std::string_view kName = "view";
  static Tensor forward(Context<State>& ctx, const Tensor& x, const Shape& shape) {
    ctx.state.x_shape = x.shape();
    return raw::view(x, shape);
  }
};

struct Reshape : Regroup<Reshape> {
  static constexpr std::string_view kName = "reshape";
  static Tensor forward(Context<State>& ctx, const Tensor& x, const Shape& shape) {
    ctx.state.x_shape = x.shape();
    return raw::reshape(x, shape);
  }
};

struct Squeeze : Regroup<Squeeze> {
  static constexpr std::string_view kName = "squeeze";
  static Tensor forward(Context<State>& ctx, const Tensor& x) {
    ctx.state.x_shape = x.shape();
    return raw::squeeze(x);
  }
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim) {
    ctx.state.x_shape = x.shape();
    return raw::squeeze(x, dim);
  }
};

struct Unsqueeze : Regroup<Unsqueeze> {
  static constexpr std::string_view kName = "unsqueeze";
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim) {
    ctx.state.x_shape = x.shape();
    return raw::unsqueeze(x, dim);
  }
};

struct Flatten : Regroup<Flatten> {
  static constexpr std::string_view kName = "flatten";
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t start_dim, int64_t end_dim) {
    ctx.state.x_shape = x.shape();
    return raw::flatten(x, start_dim, end_dim);
  }
};

struct Unflatten : Regroup<Unflatten> {
  static constexpr std::string_view kName = "unflatten";
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim, const Shape& sizes) {
    ctx.state.x_shape = x.shape();
    return raw::unflatten(x, dim, sizes);
  }
};

struct Permute : Function<Permute> {
  static constexpr std::string_view kName = "permute";
  struct State {
    DimVec dims;  // wrapped into [0, rank)
  };
  // forward: out dim i = x dim dims[i]
  static Tensor forward(Context<State>& ctx, const Tensor& x, const DimVec& dims) {
    Tensor out = raw::permute(x, dims);  // validates dims first
    ctx.state.dims = DimVec(dims.size(), 0);
    for (size_t i = 0; i < dims.size(); ++i) {
      ctx.state.dims[i] = static_cast<int64_t>(wrap_dim(dims[i], x.dim(), "permute"));
    }
    return out;
  }
  // backward: x dim dims[i] is out dim i, so dx = dout.permute(inverse) with
  // inverse[dims[i]] = i
  static Grads backward(Context<State>& ctx, const Grads& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const DimVec& dims = ctx.state.dims;
    DimVec inverse(dims.size(), 0);
    for (size_t i = 0; i < dims.size(); ++i) inverse[static_cast<size_t>(dims[i])] = int64_t(i);
    return {raw::permute(g[0], inverse)};
  }
};

struct Transpose : Function<Transpose> {
  static constexpr std::string_view kName = "transpose";
  struct State {
    int64_t dim0 = 0, dim1 = 0;
  };
  // forward: out = x with dims dim0 and dim1 swapped
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim0, int64_t dim1) {
    ctx.state = {dim0, dim1};
    return raw::transpose(x, dim0, dim1);
  }
  // backward: swapping the same two dims again undoes it: dx = dout.transpose(dim0, dim1)
  static Grads backward(Context<State>& ctx, const Grads& g) {
    return {ctx.needs_input_grad(0) ? raw::transpose(g[0], ctx.state.dim0, ctx.state.dim1)
                                    : Tensor()};
  }
};

struct MatrixTranspose : Function<MatrixTranspose> {
  static constexpr std::string_view kName = "t";
  // forward: out = x.t() (x itself for 0-d and 1-d x)
  static Tensor forward(Context<>&, const Tensor& x) { return raw::t(x); }
  // backward: dx = dout.t()
  static Grads backward(Context<>& ctx, const Grads& g) {
    return {ctx.needs_input_grad(0) ? raw::t(g[0]) : Tensor()};
  }
};

}  // namespace

// ---------------------------------------------------------------- the public methods

Tensor Tensor::view(const Shape& shape, Here here) const {
  return View::apply_at(here, *this, shape);
}

Tensor Tensor::reshape(const Shape& shape, Here here) const {
  return Reshape::apply_at(here, *this, shape);
}

Tensor Tensor::permute(const DimVec& dims, Here here) const {
  return Permute::apply_at(here, *this, dims);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1, Here here) const {
  return Transpose::apply_at(here, *this, dim0, dim1);
}

Tensor Tensor::t(Here here) const { return MatrixTranspose::apply_at(here, *this); }

Tensor Tensor::squeeze(Here here) const { return Squeeze::apply_at(here, *this); }

Tensor Tensor::squeeze(int64_t dim, Here here) const { return Squeeze::apply_at(here, *this, dim); }

Tensor Tensor::unsqueeze(int64_t dim, Here here) const {
  return Unsqueeze::apply_at(here, *this, dim);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim, Here here) const {
  return Flatten::apply_at(here, *this, start_dim, end_dim);
}

Tensor Tensor::unflatten(int64_t dim, const Shape& sizes, Here here) const {
  return Unflatten::apply_at(here, *this, dim, sizes);
}

}  // namespace tg
