// nn/distributed/buckets.h — which gradients travel together in one all-reduce.
//
// Sending every parameter's gradient on its own would pay MPI's fixed cost per message
// (microseconds on one machine, tens of them across a network) hundreds of times per step;
// sending all of them at the end of backward in one message would leave the network idle
// while backward runs. DistributedDataParallel takes the middle road: it groups the gradients
// into buckets of about `cap_bytes` each, and starts a bucket's all-reduce as soon as every
// gradient in it is ready, while backward computes the rest.
//
// Backward produces gradients roughly in the reverse of the order the parameters were
// registered (the last layer's first), so the buckets are filled from the last parameter to
// the first: bucket 0 holds the last parameters and is ready first.
//
//   bytes = {400, 40, 4000, 40, 400},  cap_bytes = 1000
//   walk from the last:  4: 400         (bucket 0 now 400 bytes)
//                        3: 40          (440)
//                        2: 4000        (4440 >= 1000: bucket 0 is {4, 3, 2}, closed)
//                        1: 40, 0: 400  (bucket 1 is {1, 0}: the rest)
//
// PyTorch equivalent: the bucket assignment of DistributedDataParallel's Reducer
// (bucket_cap_mb=25; PyTorch also caps the first bucket at 1 MiB, which tapegrad does not).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tg::distributed {

/// Buckets of parameter indices for gradients of `bytes[i]` bytes each: walking i from the
/// last parameter to the first, a parameter joins the open bucket, and the bucket closes as
/// soon as it holds `cap_bytes` or more (so a bucket passes the cap by at most its last
/// parameter, and one bigger than the cap closes its bucket at once). Every index appears in
/// exactly one bucket, buckets in the order they will be sent, indices in the order they
/// joined. ValueError for a cap below 1 or a negative size.
std::vector<std::vector<size_t>> assign_buckets(const std::vector<int64_t>& bytes,
                                                int64_t cap_bytes);

}  // namespace tg::distributed
