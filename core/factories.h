// core/factories.h — making new tensors.
//
// Every factory returns a fresh, contiguous tensor that owns new storage. The dtype
// defaults to float32, as in PyTorch; integer-valued ranges can ask for kInt64.
#pragma once

#include <initializer_list>
#include <vector>

#include "core/tensor.h"

namespace tg {

/// Uninitialised memory: read it only after writing it.
Tensor empty(const Shape& shape, DType dtype = kFloat32);
Tensor zeros(const Shape& shape, DType dtype = kFloat32);
Tensor ones(const Shape& shape, DType dtype = kFloat32);
Tensor full(const Shape& shape, double value, DType dtype = kFloat32);

/// Same shape and dtype as `like` (or the dtype given).
Tensor empty_like(const Tensor& like);
Tensor empty_like(const Tensor& like, DType dtype);
Tensor zeros_like(const Tensor& like);
Tensor zeros_like(const Tensor& like, DType dtype);
Tensor ones_like(const Tensor& like);
Tensor ones_like(const Tensor& like, DType dtype);
Tensor full_like(const Tensor& like, double value);
Tensor full_like(const Tensor& like, double value, DType dtype);

/// start, start + step, ... while < end (> end for a negative step):
/// ceil((end - start) / step) elements, as in PyTorch.
Tensor arange(double start, double end, double step = 1.0, DType dtype = kFloat32);
/// arange(0, end).
Tensor arange(double end, DType dtype = kFloat32);
/// `steps` evenly spaced values from start to end, both included.
Tensor linspace(double start, double end, int64_t steps, DType dtype = kFloat32);
/// An n x m matrix with ones on the diagonal (m = n if negative).
Tensor eye(int64_t n, int64_t m = -1, DType dtype = kFloat32);

/// A tensor with the given values (row-major) and shape; the dtype follows T
/// (float -> float32, double -> float64, int64_t -> int64, bool -> bool, ...).
template <class T>
Tensor tensor(const std::vector<T>& values, const Shape& shape);
/// A 1-D tensor from values.
template <class T>
Tensor tensor(const std::vector<T>& values) {
  return tensor(values, Shape{static_cast<int64_t>(values.size())});
}
/// `tensor({1.f, 2.f, 3.f, 4.f}, {2, 2})`; int literals make an int64 tensor.
Tensor tensor(std::initializer_list<float> values, const Shape& shape);
Tensor tensor(std::initializer_list<double> values, const Shape& shape);
Tensor tensor(std::initializer_list<int> values, const Shape& shape);
Tensor tensor(std::initializer_list<bool> values, const Shape& shape);
/// A 1-D float32 tensor: `tensor({1.f, 2.f})`.
Tensor tensor(std::initializer_list<float> values);
/// A 1-D float64 tensor: `tensor({1.0, 2.0})` (double literals keep their precision).
Tensor tensor(std::initializer_list<double> values);
/// A 0-d tensor holding one value.
Tensor scalar_tensor(double value, DType dtype = kFloat32);

}  // namespace tg
