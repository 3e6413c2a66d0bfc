// core/storage.cpp — aligned allocation.
#include "core/storage.h"

#include <cstdlib>

#include "core/error.h"

namespace tg {

Storage::Storage(size_t nbytes) : nbytes_(nbytes) {
  // aligned_alloc wants a size that is a multiple of the alignment; allocating at least
  // one line means even an empty tensor has a valid (never dereferenced) data pointer.
  const size_t lines = nbytes / kAlignment + 1;
  TG_CHECK(lines <= SIZE_MAX / kAlignment, ValueError, "Storage: {} bytes is too large", nbytes);
  data_ = static_cast<std::byte*>(std::aligned_alloc(kAlignment, lines * kAlignment));
  TG_CHECK(data_ != nullptr, ValueError, "Storage: out of memory allocating {} bytes", nbytes);
}

Storage::~Storage() { std::free(data_); }

}  // namespace tg
