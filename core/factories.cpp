// core/factories.cpp — fresh tensors.
#include "core/factories.h"

#include <cmath>

#include "core/recycling_allocator.h"

namespace tg {

Tensor empty(const Shape& shape, DType dtype) {
  const int64_t n = checked_numel(shape, "empty");
  const size_t itemsize = element_size(dtype);
  size_t nbytes = 0;
  TG_CHECK(!__builtin_mul_overflow(static_cast<size_t>(n), itemsize, &nbytes), ShapeError,
           "empty: shape {} of dtype {} needs more bytes than size_t can count", shape, dtype);
  auto impl = detail::make_recycled<TensorImpl>();
  impl->storage = detail::make_recycled<Storage>(nbytes);
  impl->strides = contiguous_strides(shape);
  impl->shape = shape;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor zeros(const Shape& shape, DType dtype) { return full(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Tensor full(const Shape& shape, double value, DType dtype) {
  Tensor t = empty(shape, dtype);
  t.fill_(value);
  return t;
}

Tensor empty_like(const Tensor& like) { return empty(like.shape(), like.dtype()); }
Tensor empty_like(const Tensor& like, DType dtype) { return empty(like.shape(), dtype); }
Tensor zeros_like(const Tensor& like) { return zeros(like.shape(), like.dtype()); }
Tensor zeros_like(const Tensor& like, DType dtype) { return zeros(like.shape(), dtype); }
Tensor ones_like(const Tensor& like) { return ones(like.shape(), like.dtype()); }
Tensor ones_like(const Tensor& like, DType dtype) { return ones(like.shape(), dtype); }
Tensor full_like(const Tensor& like, double value) {
  return full(like.shape(), value, like.dtype());
}
Tensor full_like(const Tensor& like, double value, DType dtype) {
  return full(like.shape(), value, dtype);
}

// Fills a contiguous tensor with value(i) for i = 0 .. numel-1, computed in double.
template <class Fn>
static Tensor generate(int64_t n, DType dtype, Fn&& value) {
  Tensor t = empty(Shape{n}, dtype);
  visit_dtype(dtype, [&]<class T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = convert<T>(value(i));
  });
  return t;
}

Tensor arange(double start, double end, double step, DType dtype) {
  TG_CHECK(std::isfinite(start) && std::isfinite(end), ValueError,
           "arange: start ({}) and end ({}) must be finite", start, end);
  TG_CHECK(step != 0 && std::isfinite(step), ValueError,
           "arange: step must be finite and non-zero, got {}", step);
  TG_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), ValueError,
           "arange: step {} moves away from end: start {}, end {}", step, start, end);
  const double count = std::ceil((end - start) / step);
  TG_CHECK(count < 9.2e18, ValueError, "arange: {} elements is too many", count);
  return generate(static_cast<int64_t>(count), dtype,
                  [&](int64_t i) { return start + static_cast<double>(i) * step; });
}

Tensor arange(double end, DType dtype) { return arange(0.0, end, 1.0, dtype); }

Tensor linspace(double start, double end, int64_t steps, DType dtype) {
  TG_CHECK(steps >= 0, ValueError, "linspace: steps must be non-negative, got {}", steps);
  TG_CHECK(std::isfinite(start) && std::isfinite(end), ValueError,
           "linspace: start ({}) and end ({}) must be finite", start, end);
  const double delta = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  // Like PyTorch, fill the second half backwards from `end`, so both ends are exact;
  // a single step is `start` (the "second half" would otherwise make it `end`).
  return generate(steps, dtype, [&](int64_t i) {
    return i < steps / 2 || steps == 1 ? start + delta * static_cast<double>(i)
                                       : end - delta * static_cast<double>(steps - 1 - i);
  });
}

Tensor eye(int64_t n, int64_t m, DType dtype) {
  if (m < 0) m = n;
  TG_CHECK(n >= 0, ValueError, "eye: n must be non-negative, got {}", n);
  Tensor t = zeros(Shape{n, m}, dtype);
  for (int64_t i = 0; i < std::min(n, m); ++i) t.select(0, i).select(0, i).fill_(1.0);
  return t;
}

template <class T>
Tensor tensor(const std::vector<T>& values, const Shape& shape) {
  const int64_t n = checked_numel(shape, "tensor");
  TG_CHECK(static_cast<int64_t>(values.size()) == n, ShapeError,
           "tensor: {} values cannot fill shape {} ({} elements)", values.size(), shape, n);
  Tensor t = empty(shape, dtype_of<T>());
  T* p = t.data<T>();
  for (int64_t i = 0; i < n; ++i) p[i] = values[static_cast<size_t>(i)];  // vector<bool> too
  return t;
}

template Tensor tensor(const std::vector<float>&, const Shape&);
template Tensor tensor(const std::vector<double>&, const Shape&);
template Tensor tensor(const std::vector<Half>&, const Shape&);
template Tensor tensor(const std::vector<BFloat16>&, const Shape&);
template Tensor tensor(const std::vector<int64_t>&, const Shape&);
template Tensor tensor(const std::vector<bool>&, const Shape&);

Tensor tensor(std::initializer_list<float> values, const Shape& shape) {
  return tensor(std::vector<float>(values), shape);
}
Tensor tensor(std::initializer_list<double> values, const Shape& shape) {
  return tensor(std::vector<double>(values), shape);
}
Tensor tensor(std::initializer_list<int> values, const Shape& shape) {
  return tensor(std::vector<int64_t>(values.begin(), values.end()), shape);
}
Tensor tensor(std::initializer_list<bool> values, const Shape& shape) {
  return tensor(std::vector<bool>(values), shape);
}
Tensor tensor(std::initializer_list<float> values) { return tensor(std::vector<float>(values)); }
Tensor tensor(std::initializer_list<double> values) { return tensor(std::vector<double>(values)); }

Tensor scalar_tensor(double value, DType dtype) { return full(Shape{}, value, dtype); }

}  // namespace tg
