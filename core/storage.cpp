// core/storage.cpp — aligned allocation, through a cache of freed blocks.
//
// Why a cache: a training step allocates the same buffers every time (activations,
// gradients, temporaries), and frees them again. Asking the system each time costs a
// malloc/free pair for a tiny tensor (the free lists of glibc's malloc get reshuffled
// when thousands of blocks are freed at once, as at the end of a backward pass), and for
// a big buffer an mmap/munmap pair plus one page fault per 4 KiB touched. Keeping freed
// blocks on a free list per size and handing them out again skips all of that.
//
// Why it is safe: a cached block is not in use by any tensor (its Storage was destroyed),
// and a new Storage never assumes zeroed memory (it promises uninitialised bytes). Sizes
// are exact (whole cache lines), so no memory is wasted by rounding up; a block is only
// reused for a Storage of exactly its size. The cache holds at most kMaxCachedBytes;
// beyond that freed blocks go back to the system.
//
// AddressSanitizer sees a use after free only of memory that was really freed, and an
// overflow only past the end of what malloc handed out. So in ASan builds (the sanitize
// preset) a cached block is poisoned as a whole, and a block in use has its rounding slack
// (the bytes past nbytes) poisoned: core/asan.h. The sanitize build thereby runs the same
// cache as a release build, and sees what the cache would otherwise hide.
#include "core/storage.h"

#include <array>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/asan.h"
#include "core/error.h"

namespace tg {
namespace {

// Enough for every buffer of the benchmark workloads to be reused from step to step,
// small enough that an idle cache cannot hold much of a machine's memory.
constexpr size_t kMaxCachedBytes = size_t{1} << 30;  // 1 GiB

// Blocks of up to this many cache lines (4 KiB) have their free list at a fixed index;
// larger ones are looked up by size in a hash map.
constexpr size_t kDirectLines = 64;

// Free lists of blocks by exact size, shared by all threads (a tensor may be freed on
// another thread than the one that made it), guarded by one mutex.
class BlockCache {
 public:
  // A cached block of exactly `bytes` (a multiple of the alignment), or null.
  std::byte* take(size_t bytes) {
    std::lock_guard lock(mutex_);
    std::vector<std::byte*>& blocks = list(bytes);
    if (blocks.empty()) return nullptr;
    std::byte* p = blocks.back();
    blocks.pop_back();
    cached_bytes_ -= bytes;
    return p;
  }

  // Keeps a freed block for reuse; false if the cache is closed or full (then the caller
  // frees it).
  bool give(std::byte* p, size_t bytes) {
    std::lock_guard lock(mutex_);
    if (closed_ || cached_bytes_ + bytes > kMaxCachedBytes) return false;
    list(bytes).push_back(p);
    cached_bytes_ += bytes;
    return true;
  }

  void empty() {
    std::lock_guard lock(mutex_);
    auto free_all = [](std::vector<std::byte*>& blocks, size_t bytes) {
      for (std::byte* p : blocks) {
        detail::asan_unpoison(p, bytes);
        std::free(p);
      }
      blocks = {};
    };
    for (size_t lines = 0; lines < small_.size(); ++lines)
      free_all(small_[lines], lines * Storage::kAlignment);
    for (auto& [bytes, blocks] : large_) free_all(blocks, bytes);
    large_.clear();
    cached_bytes_ = 0;
  }

  // At exit: give everything back, and free later blocks directly.
  void close() {
    empty();
    std::lock_guard lock(mutex_);
    closed_ = true;
  }

  size_t bytes() {
    std::lock_guard lock(mutex_);
    return cached_bytes_;
  }

 private:
  std::vector<std::byte*>& list(size_t bytes) {
    const size_t lines = bytes / Storage::kAlignment;
    return lines <= kDirectLines ? small_[lines] : large_[bytes];
  }

  std::mutex mutex_;
  std::array<std::vector<std::byte*>, kDirectLines + 1> small_;  // by size in lines
  std::unordered_map<size_t, std::vector<std::byte*>> large_;    // by size in bytes
  size_t cached_bytes_ = 0;
  bool closed_ = false;
};

// The one cache. It is never destroyed: a Storage may be freed by a static destructor that
// runs after the cache's own destructor would have run. Instead an atexit handler returns
// the cached blocks to the system and closes the cache, so later frees bypass it.
BlockCache& cache() {
  static BlockCache* const instance = [] {
    auto* c = new BlockCache;
    std::atexit([] { cache().close(); });
    return c;
  }();
  return *instance;
}

// A block of `bytes` for a Storage of `used` bytes: only those may be touched.
std::byte* allocate(size_t bytes, size_t used) {
  if (std::byte* p = cache().take(bytes)) {
    detail::asan_unpoison(p, used);
    return p;
  }
  auto* p = static_cast<std::byte*>(std::aligned_alloc(Storage::kAlignment, bytes));
  if (p == nullptr) {
    cache().empty();  // the cached blocks may be what the system is missing
    p = static_cast<std::byte*>(std::aligned_alloc(Storage::kAlignment, bytes));
  }
  if (p != nullptr) detail::asan_poison(p + used, bytes - used);  // the rounding slack
  return p;
}

void release(std::byte* p, size_t bytes) {
  detail::asan_poison(p, bytes);  // in the cache, nobody's: any access is a use after free
  if (cache().give(p, bytes)) return;
  detail::asan_unpoison(p, bytes);
  std::free(p);
}

// The size actually allocated for `nbytes`: whole cache lines (aligned_alloc wants a
// multiple of the alignment), at least one, so that even an empty tensor has a valid
// (never dereferenced) data pointer.
size_t block_bytes(size_t nbytes) {
  return (nbytes / Storage::kAlignment + 1) * Storage::kAlignment;
}

}  // namespace

Storage::Storage(size_t nbytes) : nbytes_(nbytes) {
  TG_CHECK(nbytes / kAlignment + 1 <= SIZE_MAX / kAlignment, ValueError,
           "Storage: {} bytes is too large", nbytes);
  data_ = allocate(block_bytes(nbytes), nbytes);
  TG_CHECK(data_ != nullptr, ValueError, "Storage: out of memory allocating {} bytes", nbytes);
}

Storage::~Storage() { release(data_, block_bytes(nbytes_)); }

void empty_storage_cache() { cache().empty(); }

size_t storage_cache_bytes() { return cache().bytes(); }

bool storage_cache_enabled() { return true; }

}  // namespace tg
