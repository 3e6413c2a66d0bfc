// ops/fast/cross_entropy.cpp — cross-entropy's fast kernels: the math of
// ops/cross_entropy.cpp per row, vectorised with core/simd.h (exp without a library call,
// sums in lanes), rows shared between threads. Each row is computed whole by one thread, so
// results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "core/simd.h"
#include "ops/cross_entropy.h"
#include "ops/fast/install.h"

namespace tg::fast {
namespace {

using kernels::GradOut;

template <class F>
void cross_entropy_forward(const F* x, const int64_t* target, F* loss, F* lse, int64_t rows,
                           int64_t C, int64_t ignore_index, F e) {
  parallel_rows(rows, C, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const F* xr = x + r * C;
      F m = detail::row_max(xr, C);
      if (m == -std::numeric_limits<F>::infinity()) m = 0;  // all -inf, as in the reference
      lse[r] = m + std::log(detail::row_sum_exp(xr, C, m));
      if (target[r] == ignore_index) {
        loss[r] = 0;
        continue;
      }
      const F nll = lse[r] - xr[target[r]];
      // The smoothing term reads the row once more (from cache), only when e > 0.
      const F smooth = e > 0 ? static_cast<F>(C) * lse[r] - detail::row_sum(xr, C) : F(0);
      loss[r] = (F(1) - e) * nll + e / static_cast<F>(C) * smooth;
    }
  });
}

/// dx for one row, written: dx_c = (exp(x_c - lse) - off) * w.
template <class F>
TG_WIDE_VECTORS void row_backward(const F* __restrict xr, F* __restrict dxr, int64_t C, F lse,
                                  F off, F w) {
  detail::simd_for(C, [&](int64_t c) { dxr[c] = (detail::fast_exp(xr[c] - lse) - off) * w; });
}

/// Row r is first computed whole, target fix-up included, then written, or added into an
/// existing .grad from a row of scratch: the same bits as "write dx, then add it in" (up to
/// the sign of a zero: an ignored row adds nothing rather than +0).
template <class F>
void cross_entropy_backward(const F* x, const int64_t* target, const F* lse, const F* dloss,
                            int64_t dloss_step, F factor, GradOut<F> dx, int64_t rows, int64_t C,
                            int64_t ignore_index, F e) {
  const F off = e / static_cast<F>(C);
  parallel_rows(rows, 2 * C, [&](int64_t begin, int64_t end) {
    std::vector<F> scratch(dx.add ? static_cast<size_t>(C) : 0);  // one row, in cache
    for (int64_t r = begin; r < end; ++r) {
      F* dxr = dx.data + r * C;
      if (target[r] == ignore_index) {
        if (!dx.add) std::fill(dxr, dxr + C, F(0));
        continue;
      }
      F* row = dx.add ? scratch.data() : dxr;
      const F w = dloss[r * dloss_step] * factor;
      row_backward(x + r * C, row, C, lse[r], off, w);
      row[target[r]] -= (F(1) - e) * w;
      if (dx.add) detail::row_add(dxr, row, C);
    }
  });
}

}  // namespace

void install_cross_entropy() {
  kernels::cross_entropy_forward.set_fast(cross_entropy_forward<float>,
                                          cross_entropy_forward<double>);
  kernels::cross_entropy_backward.set_fast(cross_entropy_backward<float>,
                                           cross_entropy_backward<double>);
}

}  // namespace tg::fast
