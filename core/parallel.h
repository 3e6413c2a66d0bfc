// core/parallel.h — running a loop on several threads without changing its result.
//
// tapegrad's kernels split work by OUTPUT: a thread owns a contiguous range of output rows
// (or GEMM tiles) and computes each of them exactly as a single thread would, in the same
// order. No sum is ever split by thread, so every result is bit-identical for any thread
// count, and from run to run. (Splitting a sum by thread would change its order with the
// machine, and (a + b) + (c + d) != ((a + b) + c) + d in floating point.) A long sum may be
// cut into fixed blocks instead, whose partial sums are added in block order: the blocks
// depend on the sizes alone, so they can go to any thread (the sum of a whole tensor in
// ops/fast/reduce.cpp, RMSNorm's dw in ops/fast/rms_norm.cpp).
//
// The number of threads starts from the environment variable TAPEGRAD_NUM_THREADS, else the
// number of processors, and can be changed at any time with tg::set_num_threads. The
// threads are OpenMP's; a parallel_for inside another one runs serially.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace tg {

/// Sets how many threads kernels may use (n >= 1).
void set_num_threads(int n);

/// How many threads kernels may use.
int num_threads();

/// Sets the thread count for the lifetime of the guard, then restores the previous one.
class NumThreadsGuard {
 public:
  explicit NumThreadsGuard(int n) : previous_(num_threads()) { set_num_threads(n); }
  ~NumThreadsGuard() { set_num_threads(previous_); }
  NumThreadsGuard(const NumThreadsGuard&) = delete;
  NumThreadsGuard& operator=(const NumThreadsGuard&) = delete;

 private:
  int previous_;
};

namespace detail {
using RangeFn = void (*)(void* context, int64_t begin, int64_t end);
void parallel_for_impl(int64_t n, int64_t grain, RangeFn fn, void* context);
}  // namespace detail

/// Calls body(begin, end) on contiguous pieces that together cover [0, n) exactly once,
/// each piece on its own thread, and returns when all are done. A piece is never smaller
/// than `grain` items (except when n itself is), so small loops stay on one thread.
/// Kernels call parallel_rows, which derives the grain from the work per item.
template <class Body>
void parallel_for(int64_t n, int64_t grain, Body&& body) {
  using B = std::remove_reference_t<Body>;
  detail::parallel_for_impl(
      n, grain,
      [](void* context, int64_t begin, int64_t end) { (*static_cast<B*>(context))(begin, end); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

/// The one grain rule: a thread's piece is worth at least kPieceWork units of work, about
/// 10 microseconds, so that starting a thread never costs more than the work it takes over.
/// A unit is one element read or written by a memory-bound loop, or 16 multiply-adds of a
/// compute-bound one (a matrix product).
inline constexpr int64_t kPieceWork = 32768;

/// parallel_for over `rows` independent rows (elements, tiles, slices) of `row_work` units
/// each (see kPieceWork): calls body(begin, end) on contiguous ranges of rows.
template <class Body>
void parallel_rows(int64_t rows, int64_t row_work, Body&& body) {
  const int64_t work = row_work > 0 ? row_work : 1;
  parallel_for(rows, work >= kPieceWork ? 1 : kPieceWork / work, std::forward<Body>(body));
}

}  // namespace tg
