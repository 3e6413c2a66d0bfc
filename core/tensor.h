// core/tensor.h — the Tensor: a cheap handle to a strided view of shared storage.
//
// Conventions used throughout tapegrad (as in PyTorch):
//   * row-major, batch-first: activations are (B, T, C);
//     B = batch, T = time (sequence position), C = channels, V = vocabulary;
//   * a Linear weight is (out_features, in_features) and y = x @ W^T + b;
//   * negative dims count from the end (-1 is the last dim).
//
// A Tensor is a shared_ptr to a TensorImpl. Copying a Tensor copies the pointer, so
// `Tensor b = a;` is the same tensor (same data, same grad), like `b = a` in Python.
// A view (transpose, narrow, reshape when possible, ...) is a new TensorImpl that
// shares the Storage: element (i0, ..., ik) of any tensor lives at
//
//     storage bytes + element_size * (offset + i0*stride0 + ... + ik*stridek)
//
// so a view is only new metadata, and writing through it changes the base.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"
#include "core/storage.h"

namespace tg {

class Node;
class Tensor;

/// The caller's place in the source. Every differentiable op and method takes one,
/// defaulted to its call site, so that the tape (print_tape, anomaly mode) can point at your
/// line.
using Here = std::source_location;

/// The argument of Tensor::operator[]: an index and the place of `x[i]` in your source. An
/// operator cannot take a defaulted location parameter of its own, but the default
/// argument of this converting constructor is evaluated where `i` is converted: at `x[i]`.
struct SubscriptIndex {
  SubscriptIndex(int64_t i, Here where = Here::current()) : index(i), here(where) {}
  int64_t index;
  Here here;
};

/// What a Tensor handle points to. Users go through Tensor; ops may read it directly.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;
  int64_t offset = 0;  ///< in elements, from the start of storage
  DType dtype = DType::Float32;
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;  ///< null until a backward pass writes one
  // Autograd (see core/autograd.h). A tensor made by a recorded op points to that op's
  // node; a leaf (made by a factory, or detached) has none.
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;  ///< which output of grad_fn this tensor is
  bool retains_grad = false;
  std::vector<std::function<Tensor(const Tensor&)>> hooks;  ///< on a leaf's gradient
  /// Called with the leaf once backward has finished adding into its .grad.
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;
};

class Tensor {
 public:
  /// An undefined tensor (like a default torch::Tensor): every use but defined() throws.
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  /// The implementation object; two handles are the same tensor iff these are equal.
  TensorImpl* impl() const { return impl_.get(); }
  /// Shared ownership of the implementation (what the tape keeps for a leaf).
  const std::shared_ptr<TensorImpl>& shared_impl() const { return impl_; }

  // ---- metadata
  const Shape& shape() const { return checked().shape; }
  const Strides& strides() const { return checked().strides; }
  /// Where element (0, ..., 0) sits in the storage, in elements.
  int64_t storage_offset() const { return checked().offset; }
  DType dtype() const { return checked().dtype; }
  const std::shared_ptr<Storage>& storage() const { return checked().storage; }
  size_t dim() const { return shape().size(); }
  /// Size of one dim (negative counts from the end).
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t numel() const;
  size_t element_size() const { return tg::element_size(dtype()); }
  /// True when the elements are laid out row-major with no gaps (sizes-1 dims ignored).
  bool is_contiguous() const;

  /// Typed pointer to element (0, ..., 0); DTypeError unless T is this tensor's type.
  template <class T>
  T* data() const {
    // Every kernel call asks for its pointers, so the check is inline and the call to
    // check_dtype (which formats the error) happens only when it fails.
    if (dtype() != dtype_of<T>()) [[unlikely]]
      check_dtype(dtype_of<T>(), "data");
    return reinterpret_cast<T*>(raw_data());
  }
  /// Untyped pointer to element (0, ..., 0).
  void* raw_data() const {
    const TensorImpl& t = checked();
    return t.storage->data() + t.offset * static_cast<int64_t>(tg::element_size(t.dtype));
  }

  // ---- autograd (core/autograd.h)
  bool requires_grad() const { return checked().requires_grad; }
  /// Marks a leaf as needing a gradient; only floating-point leaves can.
  Tensor& requires_grad_(bool requires_grad = true);
  /// The accumulated gradient of a leaf (or of a tensor that called retain_grad()), or an
  /// undefined tensor before any backward. MisuseError for other non-leaves.
  Tensor grad() const;
  void set_grad(const Tensor& grad);
  /// The node of the op that made this tensor (null for a leaf).
  const std::shared_ptr<Node>& grad_fn() const { return checked().grad_fn; }
  /// True for tensors not made by a recorded op: the ones whose .grad backward fills.
  bool is_leaf() const { return checked().grad_fn == nullptr; }
  /// tg::backward(*this, grad, retain_graph).
  void backward(const Tensor& grad = {}, bool retain_graph = false) const;
  /// Asks backward to keep this non-leaf's gradient in .grad too.
  void retain_grad() const;
  /// Calls `hook(grad)` whenever a gradient for this tensor is computed; if the hook
  /// returns a defined tensor, that replaces the gradient.
  void register_hook(std::function<Tensor(const Tensor&)> hook) const;
  /// Calls `hook(leaf)` during backward as soon as this leaf's .grad holds everything the pass
  /// sends it (the last op that used the leaf has run), while the rest of the pass goes on.
  /// Only for leaves, and only in passes that fill .grad (tg::backward, not tg::grad).
  /// DistributedDataParallel starts its all-reduces from here. PyTorch equivalent:
  /// Tensor.register_post_accumulate_grad_hook.
  void register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;
  /// The same data with no autograd history and requires_grad false.
  Tensor detach() const;

  // ---- views: no data is copied; the result shares storage with *this
  // Each is differentiable: with grad mode on and *this requiring grad it is recorded on
  // the tape (core/autograd.h) at `here`, your call site, and the result requires grad.
  /// Same data, new shape; one size may be -1 (inferred). ShapeError if the strides do not
  /// allow it (use reshape, which copies then).
  Tensor view(const Shape& shape, Here here = Here::current()) const;
  /// view() when possible, otherwise a contiguous copy with the new shape.
  Tensor reshape(const Shape& shape, Here here = Here::current()) const;
  /// Reorders the dims: result dim i is input dim dims[i].
  Tensor permute(const DimVec& dims, Here here = Here::current()) const;
  Tensor transpose(int64_t dim0, int64_t dim1, Here here = Here::current()) const;
  /// transpose(0, 1) for a 2-D tensor; a 0-D or 1-D tensor is returned as is (as a new
  /// handle when recorded).
  Tensor t(Here here = Here::current()) const;
  /// Removes every dim of size 1.
  Tensor squeeze(Here here = Here::current()) const;
  /// Removes `dim` if its size is 1; otherwise returns the same shape (as PyTorch).
  Tensor squeeze(int64_t dim, Here here = Here::current()) const;
  /// Inserts a dim of size 1 at `dim`, which may be in [-rank-1, rank].
  Tensor unsqueeze(int64_t dim, Here here = Here::current()) const;
  /// Broadcasts to `shape` with stride 0 along expanded dims; -1 keeps a size.
  Tensor expand(const Shape& shape, Here here = Here::current()) const;
  /// Elements [start, start + length) of `dim`.
  Tensor narrow(int64_t dim, int64_t start, int64_t length, Here here = Here::current()) const;
  /// Python's x[start:end:step] along `dim`; start/end are clamped like Python's.
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1,
               Here here = Here::current()) const;
  /// Index `index` of `dim`, which disappears from the shape.
  Tensor select(int64_t dim, int64_t index, Here here = Here::current()) const;
  /// select(0, index): `m[1][2]` is element (1, 2) of a matrix, as a 0-d view.
  Tensor operator[](SubscriptIndex i) const { return select(0, i.index, i.here); }
  /// Merges dims start..end (inclusive) into one (a view when the strides allow it).
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1, Here here = Here::current()) const;
  /// Splits `dim` into `sizes` (one may be -1).
  Tensor unflatten(int64_t dim, const Shape& sizes, Here here = Here::current()) const;
  /// *this if already contiguous (and not recorded), otherwise a contiguous copy.
  Tensor contiguous(Here here = Here::current()) const;

  // ---- access and copies
  /// The one element of a one-element tensor. DTypeError unless T is the tensor's type.
  template <class T>
  T item() const;
  /// The element at `index` (one entry per dim, negatives count from the end).
  template <class T>
  T at(const DimVec& index) const;
  /// All elements in row-major order. DTypeError unless T is the tensor's type.
  template <class T>
  std::vector<T> to_vector() const;
  /// A converted copy (always a new tensor, even for the same dtype, like clone()).
  /// Differentiable to a floating dtype (the gradient is cast back to this dtype); a
  /// conversion to int64 or bool records nothing, as its result cannot require grad.
  Tensor to(DType dtype, Here here = Here::current()) const;
  /// A contiguous copy with the same dtype; differentiable (the gradient passes through).
  Tensor clone(Here here = Here::current()) const;
  /// Sets every element to `value` (converted to the dtype). Returns *this.
  Tensor& fill_(double value);
  /// Copies `src` into *this, broadcasting it and converting its dtype. Returns *this.
  Tensor& copy_(const Tensor& src);

  /// PyTorch-style text, e.g. "tensor([ 1.0000, -2.5000], dtype=float32)".
  std::string to_string() const;

 private:
  const TensorImpl& checked() const {
    TG_CHECK(impl_ != nullptr, MisuseError,
             "tensor is undefined (default-constructed); create it with a factory such as "
             "tg::zeros");
    return *impl_;
  }
  void check_dtype(DType expected, const char* op) const;
  int64_t element_offset(const DimVec& index, const char* op) const;

  std::shared_ptr<TensorImpl> impl_;
};

/// Streams Tensor::to_string(): `std::cout << t`.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// A tensor that shares storage with `base` but has its own shape, strides and offset.
Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset);

template <class T>
T Tensor::item() const {
  check_dtype(dtype_of<T>(), "item");
  TG_CHECK(numel() == 1, ShapeError,
           "item: a tensor of shape {} has {} elements, item() needs exactly one", shape(),
           numel());
  return at<T>(DimVec(dim(), 0));
}

template <class T>
T Tensor::at(const DimVec& index) const {
  check_dtype(dtype_of<T>(), "at");
  return data<T>()[element_offset(index, "at")];
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  check_dtype(dtype_of<T>(), "to_vector");
  const Tensor c = detach().contiguous();  // a read: nothing to record on the tape
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

}  // namespace tg

/// `fmt::print("{}\n", t)` prints the tensor as Tensor::to_string() does.
template <>
struct fmt::formatter<tg::Tensor> : fmt::formatter<std::string_view> {
  auto format(const tg::Tensor& t, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(t.to_string(), ctx);
  }
};
