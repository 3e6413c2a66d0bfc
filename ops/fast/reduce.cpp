// ops/fast/reduce.cpp — the fast sum of contiguous runs (kernels::sum_rows, ops/reduce.h):
// each run summed in vector lanes (core/simd.h: a few ulp from the left-to-right sum, in an
// order that depends on n alone), runs shared between threads.
//
// A run longer than kBlock (the sum of a whole tensor is one run) is cut into blocks of
// kBlock elements: each block is summed in lanes, then the block sums are added in block
// order. Where the blocks start depends on n alone, so the total is the same on any number
// of threads, and the blocks of one long run can go to different threads. That matters
// beyond the sum's own time: a thread sums the blocks that the same thread wrote in the op
// before (parallel_for hands out the same contiguous pieces), where one thread summing
// everything would first pull the other threads' halves out of their caches.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "core/simd.h"
#include "ops/fast/install.h"
#include "ops/reduce.h"

namespace tg::fast {
namespace {

constexpr int64_t kBlock = 16384;  // elements per partial sum of a long run: 64 KiB of float

template <class F>
void sum_rows(const F* x, F* out, int64_t rows, int64_t n) {
  if (n <= kBlock) {
    parallel_rows(rows, n, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) out[r] = detail::row_sum(x + r * n, n);
    });
    return;
  }
  // partial[r * blocks + b]: the sum of block b of run r.
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<F> partial(static_cast<size_t>(rows * blocks));
  parallel_rows(rows * blocks, kBlock, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t r = i / blocks, start = (i % blocks) * kBlock;
      partial[static_cast<size_t>(i)] =
          detail::row_sum(x + r * n + start, std::min(kBlock, n - start));
    }
  });
  for (int64_t r = 0; r < rows; ++r) out[r] = detail::row_sum(partial.data() + r * blocks, blocks);
}

}  // namespace

void install_reduce() { kernels::sum_rows.set_fast(sum_rows<float>, sum_rows<double>); }

}  // namespace tg::fast
