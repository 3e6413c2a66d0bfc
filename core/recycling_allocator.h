// core/recycling_allocator.h — per-thread free lists for the small objects of the tape.
//
// Every recorded op allocates a node, and every tensor a TensorImpl and a Storage header.
// A forward pass allocates thousands of them and keeps them all alive until backward,
// which frees them all at once; the next step allocates them all again. General-purpose
// malloc handles that pattern poorly: its small per-thread caches hold only a few blocks
// per size, so the rest go through its shared bins, which merge neighbouring free blocks
// on free and split them again on the next malloc. A free list that keeps every freed
// block as it is and hands it back on the next request of the same size does each
// allocation and each free in a few instructions.
//
//   auto impl = make_recycled<TensorImpl>();  // std::make_shared, through the free lists
//
// Blocks are grouped by size rounded up to a cache line, so objects of similar size
// (nodes of different ops) share a list. Each thread has its own lists: no lock, and a
// block freed on another thread simply joins that thread's list. A list keeps at most
// kMaxBlocks blocks; beyond that, and after the thread's lists were torn down at thread
// exit, blocks go straight back to operator delete.
//
// Why it is safe: a block on a free list belongs to no object (its object was destroyed
// before deallocate), and every block on a list has the same size and alignment, so any
// of them fits the next request. In ASan builds a block on a free list is poisoned but for
// its link, and so is the rounding slack of a block in use: a use after free of a recycled
// object, or a read past its end, is reported as with plain new and delete (core/asan.h).
#pragma once

#include <cstddef>
#include <memory>
#include <new>

#include "core/asan.h"

namespace tg::detail {

// The blocks of one size that one thread has freed, linked through their first bytes.
// Trivially destructible, so it can be used at any time during the thread's life, even
// while other thread-local objects are being destroyed.
struct FreeList {
  struct Block {
    Block* next;
  };
  Block* head = nullptr;
  size_t count = 0;
  bool drainer_registered = false;
  bool closed = false;  // after thread exit began: free directly
};

inline constexpr size_t kBlockAlign = 64;  // a cache line: no false sharing between objects
inline constexpr size_t kMaxBlocks = size_t{1} << 14;

constexpr size_t round_to_block(size_t bytes) {
  return (bytes + kBlockAlign - 1) / kBlockAlign * kBlockAlign;
}

template <size_t Bytes>
FreeList& free_list() {
  thread_local constinit FreeList list;
  return list;
}

// Returns a thread's blocks to operator delete when the thread exits.
template <size_t Bytes>
struct Drainer {
  ~Drainer() {
    FreeList& list = free_list<Bytes>();
    while (list.head != nullptr) {
      FreeList::Block* b = list.head;
      asan_unpoison(b, Bytes);
      list.head = b->next;
      ::operator delete (b, std::align_val_t{kBlockAlign});
    }
    list.count = 0;
    list.closed = true;
  }
};

// A block for an object of `used` bytes (its size before rounding up to Bytes).
template <size_t Bytes>
void* take_block(size_t used) {
  FreeList& list = free_list<Bytes>();
  void* p = nullptr;
  if (list.head != nullptr) {
    FreeList::Block* b = list.head;
    asan_unpoison(b, Bytes);
    list.head = b->next;
    --list.count;
    p = b;
  } else {
    p = ::operator new (Bytes, std::align_val_t{kBlockAlign});
  }
  asan_poison(static_cast<std::byte*>(p) + used, Bytes - used);
  return p;
}

template <size_t Bytes>
void give_block(void* p) {
  FreeList& list = free_list<Bytes>();
  if (list.closed || list.count >= kMaxBlocks) {
    asan_unpoison(p, Bytes);
    ::operator delete (p, std::align_val_t{kBlockAlign});
    return;
  }
  if (!list.drainer_registered) {
    thread_local Drainer<Bytes> drainer;  // constructed here, destroyed at thread exit
    list.drainer_registered = true;
  }
  asan_unpoison(p, Bytes);
  auto* b = static_cast<FreeList::Block*>(p);
  b->next = list.head;
  list.head = b;
  ++list.count;
  // All but the link: LeakSanitizer follows no pointer stored in poisoned memory, and would
  // report every block past the head of the list as leaked. The link overlays the control
  // block's vtable pointer, which nothing but the control block itself reads.
  asan_poison(reinterpret_cast<std::byte*>(b) + sizeof(FreeList::Block),
              Bytes - sizeof(FreeList::Block));
}

/// A standard allocator (for std::allocate_shared) that recycles single objects through
/// the free lists above; arrays go to operator new as usual.
template <class T>
struct RecyclingAllocator {
  using value_type = T;
  static constexpr size_t kBytes = round_to_block(sizeof(T));
  static_assert(alignof(T) <= kBlockAlign);

  RecyclingAllocator() = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U>&) {}  // NOLINT: rebinding is implicit

  T* allocate(size_t n) {
    if (n != 1)
      return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{alignof(T)}));
    return static_cast<T*>(take_block<kBytes>(sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (n != 1) return ::operator delete (p, std::align_val_t{alignof(T)});
    give_block<kBytes>(p);
  }
  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const {
    return true;
  }
};

/// std::make_shared<T>(args...), with the object and its reference counts in a recycled
/// block.
template <class T, class... Args>
std::shared_ptr<T> make_recycled(Args&&... args) {
  return std::allocate_shared<T>(RecyclingAllocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace tg::detail
