// core/shape.h — Shape and Strides: small vectors of int64 that live inline.
//
// Row-major, like PyTorch: for a contiguous tensor of shape (d0, d1, ..., dn-1) the
// stride of dim i is the product of the sizes after it, and element (i0, ..., in-1)
// sits at offset sum_k(i_k * stride_k) elements from the tensor's first element.
//
// Every op creates shapes, so they must be cheap: up to kInlineRank dims are stored
// inside the object and never touch the heap; longer ones spill to a heap array.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <span>
#include <string_view>

namespace tg {

/// A vector of int64 with room for 8 elements inline (the heap is used only beyond 8).
class DimVec {
 public:
  static constexpr size_t kInlineRank = 8;

  DimVec() = default;
  DimVec(std::initializer_list<int64_t> dims) : DimVec(std::span(dims.begin(), dims.size())) {}
  explicit DimVec(std::span<const int64_t> dims);
  DimVec(size_t size, int64_t value);
  // Every tensor copies a shape and strides, so the inline case is written out here, where
  // the compiler can inline it: copying all kInlineRank slots, used or not, is one
  // fixed-size 64-byte copy (a single AVX-512 move), cheaper than a loop over size_ slots.
  DimVec(const DimVec& other) : size_(other.size_) {
    if (other.heap_) [[unlikely]]
      copy_spilled(other);
    else std::copy_n(other.inline_, kInlineRank, inline_);
  }
  DimVec(DimVec&& other) noexcept
      : heap_(std::move(other.heap_)), size_(other.size_), capacity_(other.capacity_) {
    if (!heap_) std::copy_n(other.inline_, kInlineRank, inline_);
    other.size_ = 0;
    other.capacity_ = kInlineRank;
  }
  DimVec& operator=(const DimVec& other) {
    if (this == &other) return *this;
    if (!heap_ && !other.heap_) [[likely]] {
      std::copy_n(other.inline_, kInlineRank, inline_);
      size_ = other.size_;
    } else {
      copy_spilled(other);
    }
    return *this;
  }
  DimVec& operator=(DimVec&& other) noexcept {
    if (this != &other) {
      heap_ = std::move(other.heap_);
      size_ = other.size_;
      capacity_ = other.capacity_;
      if (!heap_) std::copy_n(other.inline_, kInlineRank, inline_);
      other.size_ = 0;
      other.capacity_ = kInlineRank;
    }
    return *this;
  }
  ~DimVec() = default;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t back() const { return data()[size_ - 1]; }
  std::span<const int64_t> span() const { return {data(), size_}; }

  void push_back(int64_t v);
  void insert(size_t pos, int64_t v);
  void erase(size_t pos);
  /// True once the vector has grown past kInlineRank elements (it stays there after).
  bool on_heap() const { return heap_ != nullptr; }

  friend bool operator==(const DimVec& a, const DimVec& b) {
    return std::ranges::equal(a.span(), b.span());
  }

 private:
  void reserve(size_t capacity);
  // The general copy, for when either side lives on the heap.
  void copy_spilled(const DimVec& other);

  int64_t inline_[kInlineRank] = {};
  std::unique_ptr<int64_t[]> heap_;
  size_t size_ = 0;
  size_t capacity_ = kInlineRank;
};

/// The sizes of a tensor's dims, e.g. (2, 3) for a 2x3 matrix.
using Shape = DimVec;
/// For each dim, how many elements to step in storage to move one index along it.
using Strides = DimVec;

/// Streams as "(2, 3)".
std::ostream& operator<<(std::ostream& os, const DimVec& dims);

/// Product of the sizes; throws ShapeError naming `op` if it overflows int64 or a size
/// is negative.
int64_t checked_numel(const Shape& shape, std::string_view op);
/// Row-major strides: (2, 3, 4) -> (12, 4, 1).
Strides contiguous_strides(const Shape& shape);
/// True when a tensor of this shape and these strides covers a block of exactly numel
/// elements with no gaps and no overlaps, in some order of its dims: a contiguous tensor, or a
/// transposed or permuted view of one (torch calls it "non-overlapping and dense"). Such a
/// tensor can be walked as one flat run from its first element. Size-1 dims do not count.
bool is_dense(const Shape& shape, const Strides& strides);
/// Maps a possibly negative dim into [0, rank); IndexError naming `op` otherwise.
size_t wrap_dim(int64_t dim, size_t rank, std::string_view op);

}  // namespace tg

/// Formats as "(2, 3)"; a 0-d shape is "()".
template <>
struct fmt::formatter<tg::DimVec> {
  constexpr auto parse(format_parse_context& ctx) { return ctx.begin(); }
  auto format(const tg::DimVec& v, format_context& ctx) const {
    return fmt::format_to(ctx.out(), "({})", fmt::join(v.span(), ", "));
  }
};
