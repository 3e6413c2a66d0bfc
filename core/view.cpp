// core/view.cpp — views: new shape/strides/offset over the same storage, no copying.
//
// Every function here only computes metadata. The rule that makes them correct:
// the address of an element must be the same before and after, so
//   transpose swaps two (size, stride) pairs;
//   narrow/slice move the offset to the first kept element (and multiply the stride by
//     the step);
//   select moves the offset and drops the dim;
//   unsqueeze inserts a size-1 dim (its stride is never used);
//   expand gives the stretched dims stride 0;
//   view finds strides for the new shape that address the same elements, if any exist.
#include <numeric>
#include <optional>

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

}  // namespace

Tensor Tensor::view(const Shape& new_shape) const {
  const Shape s = infer_size(new_shape, numel(), "view");
  auto st = view_strides(shape(), strides(), s);
  TG_CHECK(st.has_value(), ShapeError,
           "view: shape {} is not compatible with the strides {} of this tensor of shape {} (some "
           "new dim would span non-adjacent memory); use .reshape(), which copies when needed",
           s, strides(), shape());
  return make_view(*this, s, std::move(*st), storage_offset());
}

Tensor Tensor::reshape(const Shape& new_shape) const {
  const Shape s = infer_size(new_shape, numel(), "reshape");
  if (auto st = view_strides(shape(), strides(), s)) {
    return make_view(*this, s, std::move(*st), storage_offset());
  }
  return clone().view(s);
}

Tensor Tensor::permute(const DimVec& dims) const {
  TG_CHECK(dims.size() == dim(), ShapeError,
           "permute: got {} dims {} for a tensor of rank {} (shape {})", dims.size(), dims, dim(),
           shape());
  Shape s(dim(), 0);
  Strides st(dim(), 0);
  DimVec seen(dim(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    const size_t d = wrap_dim(dims[i], dim(), "permute");
    TG_CHECK(!seen[d], ShapeError, "permute: dim {} appears twice in {}", d, dims);
    seen[d] = 1;
    s[i] = shape()[d];
    st[i] = strides()[d];
  }
  return make_view(*this, std::move(s), std::move(st), storage_offset());
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  const size_t a = wrap_dim(dim0, dim(), "transpose"), b = wrap_dim(dim1, dim(), "transpose");
  Shape s = shape();
  Strides st = strides();
  std::swap(s[a], s[b]);
  std::swap(st[a], st[b]);
  return make_view(*this, std::move(s), std::move(st), storage_offset());
}

Tensor Tensor::t() const {
  TG_CHECK(dim() <= 2, ShapeError, "t: expects a tensor of at most 2 dims, got shape {}", shape());
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::squeeze() const {
  Shape s;
  Strides st;
  for (size_t d = 0; d < dim(); ++d) {
    if (shape()[d] == 1) continue;
    s.push_back(shape()[d]);
    st.push_back(strides()[d]);
  }
  return make_view(*this, std::move(s), std::move(st), storage_offset());
}

Tensor Tensor::squeeze(int64_t dim_) const {
  const size_t d = wrap_dim(dim_, dim(), "squeeze");
  Shape s = shape();
  Strides st = strides();
  if (dim() > 0 && s[d] == 1) {
    s.erase(d);
    st.erase(d);
  }
  return make_view(*this, std::move(s), std::move(st), storage_offset());
}

Tensor Tensor::unsqueeze(int64_t dim_) const {
  // The new dim may go anywhere from before the first dim to after the last.
  const int64_t r = static_cast<int64_t>(dim());
  TG_CHECK(dim_ >= -r - 1 && dim_ <= r, IndexError,
           "unsqueeze: dim {} is out of range for a tensor of rank {} (expected {} to {})", dim_, r,
           -r - 1, r);
  const size_t d = wrap_dim(dim_, dim() + 1, "unsqueeze");
  Shape s = shape();
  Strides st = strides();
  // Any stride works for a size-1 dim; PyTorch picks size*stride of the next dim.
  st.insert(d, d < dim() ? s[d] * st[d] : 1);
  s.insert(d, 1);
  return make_view(*this, std::move(s), std::move(st), storage_offset());
}

Tensor Tensor::expand(const Shape& target) const {
  TG_CHECK(target.size() >= dim(), ShapeError,
           "expand: the target shape {} has fewer dims than the tensor's shape {}", target,
           shape());
  const size_t lead = target.size() - dim();
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
    const int64_t have = shape()[i - lead];
    const int64_t want = target[i] == -1 ? have : target[i];
    TG_CHECK(want == have || have == 1, ShapeError,
             "expand: cannot expand shape {} to {}: dim {} has size {} (only size-1 dims can grow)",
             shape(), target, i, have);
    s[i] = want;
    st[i] = want == have ? strides()[i - lead] : 0;
  }
  checked_numel(s, "expand");
  return make_view(*this, std::move(s), std::move(st), storage_offset());
}

Tensor Tensor::narrow(int64_t dim_, int64_t start, int64_t length) const {
  TG_CHECK(dim() > 0, ShapeError, "narrow: cannot narrow a 0-d tensor");
  const size_t d = wrap_dim(dim_, dim(), "narrow");
  const int64_t n = shape()[d];
  if (start < 0 && start >= -n) start += n;  // PyTorch accepts a negative start
  TG_CHECK(start >= 0 && start <= n, IndexError,
           "narrow: start {} is out of range for dim {} of size {}", start, d, n);
  TG_CHECK(length >= 0 && length <= n - start, IndexError,
           "narrow: start {} + length {} exceeds dim {} of size {}", start, length, d, n);
  Shape s = shape();
  s[d] = length;
  return make_view(*this, std::move(s), strides(), storage_offset() + start * strides()[d]);
}

Tensor Tensor::slice(int64_t dim_, int64_t start, int64_t end, int64_t step) const {
  TG_CHECK(dim() > 0, ShapeError, "slice: cannot slice a 0-d tensor");
  const size_t d = wrap_dim(dim_, dim(), "slice");
  TG_CHECK(step > 0, ValueError, "slice: step must be positive, got {}", step);
  const int64_t n = shape()[d];
  // Python semantics: negatives count from the end, then clamp into [0, n].
  auto clamp = [n](int64_t i) { return std::clamp(i < 0 ? (i < -n ? 0 : i + n) : i, 0L, n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  Shape s = shape();
  Strides st = strides();
  // ceil((end - start) / step), written so that a huge step cannot overflow.
  s[d] = end == start ? 0 : (end - start - 1) / step + 1;
  // With 0 or 1 elements kept the dim is never stepped along, so its stride does not
  // matter: keep it, as a huge step would overflow stride * step (or the offset + stride
  // that loops over the dim compute). With 2 or more, step < size and the product fits.
  if (s[d] > 1) st[d] *= step;
  return make_view(*this, std::move(s), std::move(st), storage_offset() + start * strides()[d]);
}

Tensor Tensor::select(int64_t dim_, int64_t index) const {
  TG_CHECK(dim() > 0, ShapeError, "select: cannot index into a 0-d tensor");
  const size_t d = wrap_dim(dim_, dim(), "select");
  const int64_t n = shape()[d];
  TG_CHECK(index >= -n && index < n, IndexError,
           "select: index {} is out of range for dim {} of size {} (shape {})", index, d, n,
           shape());
  if (index < 0) index += n;
  Shape s = shape();
  Strides st = strides();
  s.erase(d);
  st.erase(d);
  return make_view(*this, std::move(s), std::move(st), storage_offset() + index * strides()[d]);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  const size_t a = wrap_dim(start_dim, dim(), "flatten"), b = wrap_dim(end_dim, dim(), "flatten");
  if (dim() == 0) return reshape({1});
  TG_CHECK(a <= b, ShapeError, "flatten: start_dim {} comes after end_dim {}", start_dim, end_dim);
  Shape s;
  for (size_t i = 0; i < a; ++i) s.push_back(shape()[i]);
  int64_t merged = 1;
  for (size_t i = a; i <= b; ++i) merged *= shape()[i];
  s.push_back(merged);
  for (size_t i = b + 1; i < dim(); ++i) s.push_back(shape()[i]);
  return reshape(s);
}

Tensor Tensor::unflatten(int64_t dim_, const Shape& sizes) const {
  TG_CHECK(dim() > 0, ShapeError, "unflatten: cannot unflatten a 0-d tensor");
  const size_t d = wrap_dim(dim_, dim(), "unflatten");
  TG_CHECK(!sizes.empty(), ShapeError, "unflatten: sizes must not be empty");
  const Shape inner = infer_size(sizes, shape()[d], "unflatten");
  Shape s;
  for (size_t i = 0; i < d; ++i) s.push_back(shape()[i]);
  for (int64_t v : inner) s.push_back(v);
  for (size_t i = d + 1; i < dim(); ++i) s.push_back(shape()[i]);
  return view(s);
}

}  // namespace tg
