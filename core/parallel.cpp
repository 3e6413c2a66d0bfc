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
  const int64_t pieces =
      std::min<int64_t>(omp_in_parallel() ? 1 : num_threads(), std::max<int64_t>(n / grain, 1));
  if (pieces == 1) {
    fn(context, 0, n);
    return;
  }
  // An exception must not leave an OpenMP region: the first one is kept and rethrown here.
  std::exception_ptr error;
#pragma omp parallel for num_threads(static_cast <int>(pieces)) schedule(static, 1)
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
