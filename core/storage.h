// core/storage.h — the bytes behind tensors.
//
// A Storage is one 64-byte aligned allocation (a cache line, and the width of an
// AVX-512 register). Tensors never own memory directly: they hold a shared_ptr to a
// Storage plus a shape, strides and an offset that say which bytes they see. Views
// share the Storage of their base, which is why writing through a view changes the
// base, and why the memory lives as long as any view of it does.
//
// The blocks come from a small caching allocator (core/storage.cpp): a training step
// allocates the same buffer sizes every time, so a freed block is kept on a free list for
// its size and handed to the next Storage of that size instead of going back to the
// system. tg::empty_storage_cache() gives the cached blocks back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace tg {

class Storage {
 public:
  static constexpr size_t kAlignment = 64;

  /// Allocates `nbytes` uninitialised bytes (at least one cache line, never null).
  /// Throws tg::ValueError if the system cannot provide them.
  explicit Storage(size_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }

  /// Bumped by every in-place write (fill_, copy_, ...). A tensor saved for backward
  /// remembers the version it was saved at, so modifying it afterwards is detected.
  /// It lives here because every view of the same memory must see the same count.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  std::byte* data_;
  size_t nbytes_;
  uint64_t version_ = 0;
};

/// Returns every block the storage cache holds to the system (blocks in use stay).
/// Useful before measuring memory, or when a program moves on to much smaller tensors.
void empty_storage_cache();
/// Bytes held by the storage cache: freed blocks kept for reuse, not in use by a tensor.
size_t storage_cache_bytes();
/// Whether freed blocks are kept for reuse: always, AddressSanitizer builds included (there
/// the cached blocks are poisoned, so a use after free is still reported: core/asan.h).
bool storage_cache_enabled();

}  // namespace tg
