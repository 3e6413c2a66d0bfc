// core/tensor.cpp — Tensor metadata, element addressing and gradient fields.
#include "core/tensor.h"

#include "core/autograd.h"
#include "core/recycling_allocator.h"

namespace tg {

// wrap_dim accepts dim 0 and -1 for a 0-d tensor (ops such as sum(dim) need that), but
// there is no size or stride to read there: refuse instead of reading past the shape.
static void check_has_dims(const Tensor& t, int64_t dim, const char* op) {
  TG_CHECK(t.dim() > 0, IndexError, "{}: dim {} is out of range: the tensor is 0-d (no dims)", op,
           dim);
}

int64_t Tensor::size(int64_t dim) const {
  check_has_dims(*this, dim, "size");
  return shape()[wrap_dim(dim, this->dim(), "size")];
}

int64_t Tensor::stride(int64_t dim) const {
  check_has_dims(*this, dim, "stride");
  return strides()[wrap_dim(dim, this->dim(), "stride")];
}

int64_t Tensor::numel() const {
  // Factories validated the shape, so this product cannot overflow.
  int64_t n = 1;
  for (int64_t d : shape()) n *= d;
  return n;
}

bool Tensor::is_contiguous() const {
  // Walk from the last dim: each stride must equal the product of the sizes after it.
  // A dim of size 1 is never stepped along, so its stride does not matter; a tensor with
  // no elements is contiguous whatever its strides.
  const Shape& s = shape();
  const Strides& st = strides();
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == 1) continue;
    if (st[i] != expected) return false;
    expected *= s[i];
  }
  return true;
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  checked();  // even requires_grad_(false) writes through impl_
  TG_CHECK(is_leaf(), MisuseError,
           "requires_grad_: this tensor was made by the op '{}', so whether it needs a gradient "
           "follows from its inputs; call it on a leaf, or use .detach().requires_grad_()",
           impl_->grad_fn ? impl_->grad_fn->name() : "");
  TG_CHECK(!requires_grad || is_floating_point(dtype()), DTypeError,
           "requires_grad_: only floating-point tensors can require gradients, got dtype {}",
           dtype());
  impl_->requires_grad = requires_grad;
  return *this;
}

void Tensor::set_grad(const Tensor& grad) {
  checked();
  if (grad.defined()) {
    TG_CHECK(grad.shape() == shape(), ShapeError,
             "set_grad: gradient of shape {} does not match tensor of shape {}", grad.shape(),
             shape());
    TG_CHECK(grad.dtype() == dtype(), DTypeError,
             "set_grad: gradient of dtype {} does not match tensor of dtype {}", grad.dtype(),
             dtype());
  }
  impl_->grad = grad.defined() ? std::shared_ptr<TensorImpl>(grad.impl_) : nullptr;
}

void Tensor::check_dtype(DType expected, const char* op) const {
  TG_CHECK(dtype() == expected, DTypeError,
           "{}: tensor has dtype {} but {} was requested; convert first with .to({})", op, dtype(),
           expected, expected);
}

int64_t Tensor::element_offset(const DimVec& index, const char* op) const {
  const Shape& s = shape();
  TG_CHECK(index.size() == s.size(), IndexError,
           "{}: index {} has {} entries but the tensor of shape {} has {} dims", op, index,
           index.size(), s, s.size());
  int64_t offset = 0;
  for (size_t d = 0; d < s.size(); ++d) {
    const int64_t i = index[d] < 0 ? index[d] + s[d] : index[d];
    TG_CHECK(i >= 0 && i < s[d], IndexError,
             "{}: index {} is out of range for dim {} of size {} (shape {})", op, index[d], d, s[d],
             s);
    offset += i * strides()[d];
  }
  return offset;
}

Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset) {
  auto impl = detail::make_recycled<TensorImpl>();
  impl->storage = base.storage();
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = base.dtype();
  return Tensor(std::move(impl));
}

}  // namespace tg
