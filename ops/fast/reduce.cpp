// ops/fast/reduce.cpp — the fast sum of contiguous runs (kernels::sum_rows, ops/reduce.h):
// each run summed in vector lanes (core/simd.h: a few ulp from the left-to-right sum, in an
// order that depends on n alone), runs shared between threads.
#include "ops/reduce.h"
#include "core/parallel.h"
#include "core/simd.h"
#include "ops/fast/install.h"

namespace tg::fast {
namespace {

template <class F>
void sum_rows(const F* x, F* out, int64_t rows, int64_t n) {
  parallel_rows(rows, n, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) out[r] = detail::row_sum(x + r * n, n);
  });
}

}  // namespace

void install_reduce() { kernels::sum_rows.set_fast(sum_rows<float>, sum_rows<double>); }

}  // namespace tg::fast
