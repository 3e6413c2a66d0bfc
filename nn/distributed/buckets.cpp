// nn/distributed/buckets.cpp — the bucket assignment of buckets.h.
#include "nn/distributed/buckets.h"

#include "core/core.h"

namespace tg::distributed {

std::vector<std::vector<size_t>> assign_buckets(const std::vector<int64_t>& bytes,
                                                int64_t cap_bytes) {
  TG_CHECK(cap_bytes >= 1, ValueError,
           "assign_buckets: the bucket cap must be at least 1 byte, got {}", cap_bytes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    TG_CHECK(bytes[i] >= 0, ValueError, "assign_buckets: parameter {} has a negative size ({})", i,
             bytes[i]);
  }
  std::vector<std::vector<size_t>> buckets;
  // exercise ddp.buckets: begin
  std::vector<size_t> open;
  int64_t filled = 0;
  for (size_t i = bytes.size(); i-- > 0;) {  // from the last parameter to the first
    open.push_back(i);
    filled += bytes[i];
    if (filled >= cap_bytes) {  // full: send it as it is
      buckets.push_back(std::move(open));
      open.clear();
      filled = 0;
    }
  }
  if (!open.empty()) buckets.push_back(std::move(open));  // the first parameters, under the cap
  // exercise ddp.buckets: end
  return buckets;
}

}  // namespace tg::distributed
