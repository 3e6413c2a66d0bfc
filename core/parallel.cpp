// core/parallel.cpp — the thread count and parallel_for, on OpenMP.
#include "core/parallel.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/error.h"

namespace tg {
namespace {

int from_environment() {
  const char* value = std::getenv("TAPEGRAD_NUM_THREADS");
  if (value == nullptr || *value == '\0') return std::max(1, omp_get_num_procs());
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  TG_CHECK(*end == '\0' && n >= 1 && n <= 1024, ValueError,
           "TAPEGRAD_NUM_THREADS must be a whole number from 1 to 1024, got '{}'", value);
  return static_cast<int>(n);
}

std::atomic<int>& count() {
  static std::atomic<int> n{from_environment()};
  return n;
}

}  // namespace

void set_num_threads(int n) {
  TG_CHECK(n >= 1, ValueError, "set_num_threads: n must be at least 1, got {}", n);
  count().store(n, std::memory_order_relaxed);
}

int num_threads() { return count().load(std::memory_order_relaxed); }

namespace detail {

void parallel_for_impl(int64_t n, int64_t grain, RangeFn fn, void* context) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  // As many pieces as threads, but none smaller than grain: n / grain pieces at most.
  const int threads = omp_in_parallel() ? 1 : num_threads();
  const int64_t pieces = std::min<int64_t>(threads, std::max<int64_t>(n / grain, 1));
  if (pieces == 1) {
    fn(context, 0, n);
    return;
  }
  // The team is always all `threads`, even when there are fewer pieces: the threads past the
  // last piece go straight to the closing barrier. A team of just `pieces` threads would be
  // cheaper to wake, but OpenMP (GNU libgomp) ends the threads a smaller team leaves out and
  // creates them again for the next bigger one: a training step that alternates a 16-piece
  // product with a 4-piece RMSNorm would start 12 threads for every op (tests/core/
  // parallel_test.cpp counts them; docs/performance.md measures the cost).
  //
  // An exception must not leave an OpenMP region: the first one is kept and rethrown here.
  std::exception_ptr error;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int64_t piece = 0; piece < pieces; ++piece) {
    // Pieces differ in size by at most one item.
    const int64_t begin = n * piece / pieces, end = n * (piece + 1) / pieces;
    try {
      fn(context, begin, end);
    } catch (...) {
#pragma omp critical(tapegrad_parallel_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace detail
}  // namespace tg
