// core/asan.h — telling AddressSanitizer what tapegrad's own allocators know.
//
// tapegrad keeps freed memory for reuse (the storage cache of core/storage.cpp, the free
// lists of core/recycling_allocator.h) and rounds sizes up (a Storage of 10 bytes owns a
// 64-byte block). ASan watches malloc and free, so on its own it would see neither a read
// of a block sitting in a cache (a use after free) nor a read past the end of a tensor that
// stays inside the rounding (an overflow). Poisoning those bytes by hand makes both errors
// as visible as with the plain system allocator, so the sanitize build runs the allocators
// that users run. Without ASan these calls compile to nothing.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)  // GCC
#define TG_ASAN 1
#elif defined(__has_feature)  // Clang
#if __has_feature(address_sanitizer)
#define TG_ASAN 1
#endif
#endif

#ifdef TG_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace tg::detail {

/// Marks [p, p + bytes) as not to be touched: any access is reported (use-after-poison).
inline void asan_poison(const void* p, size_t bytes) {
#ifdef TG_ASAN
  ASAN_POISON_MEMORY_REGION(p, bytes);
#else
  (void)p, (void)bytes;
#endif
}

/// Marks [p, p + bytes) as usable again.
inline void asan_unpoison(const void* p, size_t bytes) {
#ifdef TG_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#else
  (void)p, (void)bytes;
#endif
}

/// Whether this build runs under AddressSanitizer (for tests that only it can check).
inline constexpr bool kAsan =
#ifdef TG_ASAN
    true;
#else
    false;
#endif

}  // namespace tg::detail
