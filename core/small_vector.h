// core/small_vector.h — a vector that keeps its first N elements inside the object.
//
// The tape stores a few short lists per recorded op: the edges to its inputs, the shapes
// of its inputs and outputs, the tensors it saved. Nearly always 1 to 3 entries, but a
// std::vector puts even one entry on the heap, and the node lives until backward: in a
// loop of tiny ops those allocations cost more than the arithmetic. SmallVector<T, N>
// stores up to N elements in a buffer inside the object and moves to the heap only when
// it grows past N (as DimVec does for shapes, and LLVM's SmallVector for everything).
//
// It offers the part of std::vector's interface the tape uses. Unlike std::vector, a move
// of an inline SmallVector moves the elements one by one (they live inside the object),
// so pointers to elements do not survive a move.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <new>
#include <utility>

namespace tg {

template <class T, size_t N>
class SmallVector {
  static_assert(N > 0, "use std::vector for no inline capacity");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> values) {
    reserve(values.size());
    for (const T& v : values) push_back(v);
  }
  SmallVector(const SmallVector& other) {
    reserve(other.size_);
    std::uninitialized_copy(other.begin(), other.end(), data_);
    size_ = other.size_;
  }
  SmallVector(SmallVector&& other) noexcept { take(std::move(other)); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      clear();
      reserve(other.size_);
      std::uninitialized_copy(other.begin(), other.end(), data_);
      size_ = other.size_;
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      destroy_all();
      take(std::move(other));
    }
    return *this;
  }
  ~SmallVector() { destroy_all(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  /// True once the vector has grown past N elements.
  bool on_heap() const { return data_ != inline_data(); }

  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      // Build the element first: `args` may refer to an element that growing moves.
      T v(std::forward<Args>(args)...);
      reserve(2 * capacity_);
      return *::new (data_ + size_++) T(std::move(v));
    }
    return *::new (data_ + size_++) T(std::forward<Args>(args)...);
  }
  void pop_back() { std::destroy_at(data_ + --size_); }
  void clear() {
    std::destroy(begin(), end());
    size_ = 0;
  }
  /// Grows with value-initialised elements or shrinks to `n`.
  void resize(size_t n) {
    reserve(n);
    if (n > size_) std::uninitialized_value_construct(data_ + size_, data_ + n);
    else std::destroy(data_ + n, data_ + size_);
    size_ = n;
  }
  void reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    T* bigger =
        static_cast<T*>(::operator new (capacity * sizeof(T), std::align_val_t{alignof(T)}));
    std::uninitialized_move(begin(), end(), bigger);
    std::destroy(begin(), end());
    free_heap();
    data_ = bigger;
    capacity_ = capacity;
  }

 private:
  T* inline_data() { return reinterpret_cast<T*>(inline_); }
  const T* inline_data() const { return reinterpret_cast<const T*>(inline_); }
  void free_heap() {
    if (on_heap()) ::operator delete (data_, std::align_val_t{alignof(T)});
  }
  void destroy_all() {
    clear();
    free_heap();
    data_ = inline_data();
    capacity_ = N;
  }
  // Steals other's heap buffer, or moves its inline elements over; leaves it empty.
  void take(SmallVector&& other) {
    const size_t n = other.size_;
    if (other.on_heap()) {
      data_ = std::exchange(other.data_, other.inline_data());
      capacity_ = std::exchange(other.capacity_, N);
      other.size_ = 0;
    } else {
      std::uninitialized_move(other.begin(), other.end(), data_);
      other.clear();
    }
    size_ = n;
  }

  // Raw bytes, not T[N]: elements past size_ must not be constructed.
  alignas(T) std::byte inline_[N * sizeof(T)];
  T* data_ = inline_data();
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace tg
