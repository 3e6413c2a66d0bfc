// core/shape.cpp — the inline small vector and shape arithmetic.
#include "core/shape.h"

#include <algorithm>
#include <cstring>
#include <ostream>
#include <utility>
#include <vector>

#include "core/error.h"

namespace tg {

DimVec::DimVec(std::span<const int64_t> dims) {
  reserve(dims.size());
  std::copy(dims.begin(), dims.end(), data());
  size_ = dims.size();
}

DimVec::DimVec(size_t size, int64_t value) {
  reserve(size);
  std::fill_n(data(), size, value);
  size_ = size;
}

void DimVec::copy_spilled(const DimVec& other) {
  size_ = 0;
  reserve(other.size_);
  std::copy(other.begin(), other.end(), data());
  size_ = other.size_;
}

void DimVec::reserve(size_t capacity) {
  if (capacity <= capacity_) return;
  const size_t grown = std::max(capacity, 2 * capacity_);
  auto bigger = std::make_unique<int64_t[]>(grown);
  std::copy_n(data(), size_, bigger.get());
  heap_ = std::move(bigger);
  capacity_ = grown;
}

void DimVec::push_back(int64_t v) {
  reserve(size_ + 1);
  data()[size_++] = v;
}

void DimVec::insert(size_t pos, int64_t v) {
  reserve(size_ + 1);
  int64_t* d = data();
  std::copy_backward(d + pos, d + size_, d + size_ + 1);
  d[pos] = v;
  ++size_;
}

void DimVec::erase(size_t pos) {
  int64_t* d = data();
  std::copy(d + pos + 1, d + size_, d + pos);
  --size_;
}

std::ostream& operator<<(std::ostream& os, const DimVec& dims) {
  return os << fmt::format("{}", dims);
}

int64_t checked_numel(const Shape& shape, std::string_view op) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    TG_CHECK(shape[i] >= 0, ShapeError, "{}: negative size {} in dim {} of shape {}", op, shape[i],
             i, shape);
  }
  // A zero anywhere makes the product 0, whatever order an overflow check would meet it in.
  if (std::ranges::find(shape, 0) != shape.end()) return 0;
  for (int64_t d : shape) {
    TG_CHECK(!__builtin_mul_overflow(n, d, &n), ShapeError,
             "{}: shape {} has more elements than int64 can count", op, shape);
  }
  return n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) {
    // A size-0 dim would make every stride before it 0; PyTorch keeps them >= 1.
    // With a size-0 dim elsewhere numel can be 0 while these products overflow.
    TG_CHECK(!__builtin_mul_overflow(strides[i], std::max<int64_t>(shape[i], 1), &strides[i - 1]),
             ShapeError, "contiguous_strides: strides of shape {} overflow int64", shape);
  }
  return strides;
}

bool is_dense(const Shape& shape, const Strides& strides) {
  // Sorted by stride, the dims of a dense layout are a contiguous one: each stride is the
  // product of the sizes of the dims with smaller strides.
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size), size > 1
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return true;  // no elements: nothing to walk
    if (shape[d] > 1) dims.emplace_back(strides[d], shape[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

size_t wrap_dim(int64_t dim, size_t rank, std::string_view op) {
  const int64_t r = static_cast<int64_t>(rank);
  // A 0-d tensor accepts dim 0 and -1, as in PyTorch.
  const int64_t lo = r == 0 ? -1 : -r, hi = r == 0 ? 0 : r - 1;
  TG_CHECK(dim >= lo && dim <= hi, IndexError,
           "{}: dim {} is out of range for a tensor of rank {} (expected {} to {})", op, dim, rank,
           lo, hi);
  return static_cast<size_t>(dim < 0 ? dim + std::max<int64_t>(r, 1) : dim);
}

}  // namespace tg
