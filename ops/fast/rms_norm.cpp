// ops/fast/rms_norm.cpp — RMSNorm's fast kernels: the math of ops/rms_norm.cpp, rearranged.
//
// 1. Vector sums: the row sums run in kLanes partial sums (core/simd.h), whose order depends
//    on C alone. They differ from the reference's left-to-right sums by rounding only.
// 2. One sweep over memory: a row is read once from memory and its second look (the sum
//    first, then the elementwise formula) hits the cache. add_rms_norm's residual add, its
//    backward's "+ dh_out", an add into an existing .grad, and dw's partial sums all happen
//    in the same sweep; nothing is zero-filled first.
// 3. Threads over rows. Rows are independent, except that dw sums over all of them. That sum
//    is not split by thread but by fixed blocks of kRowBlock rows: each block sums its rows,
//    in order, into its own partial dw; then the partials are added in block order. The
//    blocks depend only on `rows`, so dw is bit-identical for 1, 2 or 64 threads.
//
// The functions over ranges of rows are kept out of line: their __restrict pointers are
// what lets GCC vectorise them, and it forgets those when it inlines.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "core/simd.h"
#include "ops/fast/install.h"
#include "ops/rms_norm.h"

namespace tg::fast {
namespace {

using detail::lane_sum;
using detail::simd_for;
using kernels::GradOut;

constexpr int64_t kRowBlock = 32;  // rows per partial dw in the backward

/// One row of the forward: s = (mean(x^2) + eps)^(-1/2), y = x * s * w. Returns s.
template <class F>
inline F normalize_row(const F* __restrict x, const F* __restrict w, F* __restrict y, int64_t cols,
                       F eps) {
  const F sum_sq = lane_sum<F>(cols, [&](int64_t c) { return x[c] * x[c]; });
  const F s = F(1) / std::sqrt(sum_sq / static_cast<F>(cols) + eps);
  simd_for(cols, [&](int64_t c) { y[c] = x[c] * s * w[c]; });
  return s;
}

template <class F>
[[gnu::noinline]] void forward_rows(const F* __restrict x, const F* __restrict w, F* __restrict y,
                                    F* __restrict rstd, int64_t begin, int64_t end, int64_t cols,
                                    F eps) {
  for (int64_t r = begin; r < end; ++r) {
    rstd[r] = normalize_row(x + r * cols, w, y + r * cols, cols, eps);
  }
}

/// add_rms_norm's rows: h = residual + branch, then y and s from h.
template <class F>
[[gnu::noinline]] void add_forward_rows(const F* __restrict residual, const F* __restrict branch,
                                        const F* __restrict w, F* __restrict h, F* __restrict y,
                                        F* __restrict rstd, int64_t begin, int64_t end,
                                        int64_t cols, F eps) {
  for (int64_t r = begin; r < end; ++r) {
    const int64_t o = r * cols;
    simd_for(cols, [&](int64_t c) { h[o + c] = residual[o + c] + branch[o + c]; });
    rstd[r] = normalize_row(h + o, w, y + o, cols, eps);
  }
}

template <class F>
void rms_norm_forward(const F* x, const F* w, F* y, F* rstd, int64_t rows, int64_t cols, F eps) {
  parallel_rows(rows, 2 * cols, [&](int64_t begin, int64_t end) {
    forward_rows(x, w, y, rstd, begin, end, cols, eps);
  });
}

template <class F>
void add_rms_norm_forward(const F* residual, const F* branch, const F* w, F* h, F* y, F* rstd,
                          int64_t rows, int64_t cols, F eps) {
  parallel_rows(rows, 4 * cols, [&](int64_t begin, int64_t end) {
    add_forward_rows(residual, branch, w, h, y, rstd, begin, end, cols, eps);
  });
}

/// What one backward sweep over a row does besides the formula: kPlus adds dh_out (add_rms_
/// norm), kInto adds into what dx holds (an existing .grad), kDw sums dout * x * s into the
/// block's partial dw.
template <bool kPlus, bool kInto, bool kDw, class F>
[[gnu::noinline]] void backward_rows(const F* __restrict g, const F* __restrict x,
                                     const F* __restrict w, const F* __restrict rstd,
                                     const F* __restrict plus, F* __restrict dx,
                                     F* __restrict dw_part, int64_t begin, int64_t end,
                                     int64_t cols) {
  if constexpr (kDw) simd_for(cols, [&](int64_t c) { dw_part[c] = 0; });
  for (int64_t r = begin; r < end; ++r) {
    const F* __restrict gr = g + r * cols;
    const F* __restrict xr = x + r * cols;
    const F s = rstd[r];
    if (dx == nullptr) {
      if constexpr (kDw) simd_for(cols, [&](int64_t c) { dw_part[c] += gr[c] * xr[c] * s; });
      continue;
    }
    const F dot = lane_sum<F>(cols, [&](int64_t c) { return gr[c] * w[c] * xr[c]; });
    const F k = s * s * dot / static_cast<F>(cols);
    F* __restrict dxr = dx + r * cols;
    const F* __restrict pr = kPlus ? plus + r * cols : nullptr;
    simd_for(cols, [&](int64_t c) {
      F v = s * (gr[c] * w[c] - xr[c] * k);
      if constexpr (kPlus) v += pr[c];
      if constexpr (kInto) v += dxr[c];
      dxr[c] = v;
      if constexpr (kDw) dw_part[c] += gr[c] * xr[c] * s;
    });
  }
}

/// dw[c0, c1) = (dw +) partial_0 + partial_1 + ..., in block order: the whole sum first, then
/// one addition into an existing .grad, as the engine would.
template <class F>
[[gnu::noinline]] void sum_partials(const F* __restrict partial, F* __restrict dw, int64_t blocks,
                                    int64_t cols, int64_t c0, int64_t c1, bool into) {
  std::vector<F> sum(static_cast<size_t>(c1 - c0), F(0));
  F* __restrict acc = sum.data();
  for (int64_t b = 0; b < blocks; ++b) {
    simd_for(c1 - c0, [&](int64_t i) { acc[i] += partial[b * cols + c0 + i]; });
  }
  simd_for(c1 - c0, [&](int64_t i) { dw[c0 + i] = into ? dw[c0 + i] + acc[i] : acc[i]; });
}

/// Both backwards: rms_norm's (plus null) and add_rms_norm's (plus = dh_out).
template <class F>
void backward(const F* dout, const F* plus, const F* x, const F* w, const F* rstd, GradOut<F> dx,
              GradOut<F> dw, int64_t rows, int64_t cols) {
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  // partial[b * cols + c]: dw_c summed over the rows of block b (see 3. above).
  std::vector<F> partial(dw ? static_cast<size_t>(blocks * cols) : 0);
  auto rows_of_block = [&]<bool kPlus, bool kInto, bool kDw>(int64_t b) {
    const int64_t begin = b * kRowBlock, end = std::min(rows, begin + kRowBlock);
    backward_rows<kPlus, kInto, kDw>(dout, x, w, rstd, plus, dx.data,
                                     kDw ? partial.data() + b * cols : nullptr, begin, end, cols);
  };
  auto with_dw = [&]<bool kPlus, bool kInto>(int64_t b) {
    if (dw) rows_of_block.template operator()<kPlus, kInto, true>(b);
    else rows_of_block.template operator()<kPlus, kInto, false>(b);
  };
  auto with_into = [&]<bool kPlus>(int64_t b) {
    if (dx.add) with_dw.template operator()<kPlus, true>(b);
    else with_dw.template operator()<kPlus, false>(b);
  };
  parallel_rows(blocks, 3 * kRowBlock * cols, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      if (plus != nullptr && dx) with_into.template operator()<true>(b);
      else with_into.template operator()<false>(b);
    }
  });
  if (!dw) return;
  parallel_rows(cols, blocks, [&](int64_t c0, int64_t c1) {
    sum_partials(partial.data(), dw.data, blocks, cols, c0, c1, dw.add);
  });
}

template <class F>
void rms_norm_backward(const F* dout, const F* x, const F* w, const F* rstd, GradOut<F> dx,
                       GradOut<F> dw, int64_t rows, int64_t cols) {
  backward<F>(dout, nullptr, x, w, rstd, dx, dw, rows, cols);
}

template <class F>
void add_rms_norm_backward(const F* dout, const F* dh_out, const F* h, const F* w, const F* rstd,
                           GradOut<F> dh, GradOut<F> dw, int64_t rows, int64_t cols) {
  backward<F>(dout, dh_out, h, w, rstd, dh, dw, rows, cols);
}

}  // namespace

void install_rms_norm() {
  kernels::rms_norm_forward.set_fast(rms_norm_forward<float>, rms_norm_forward<double>);
  kernels::rms_norm_backward.set_fast(rms_norm_backward<float>, rms_norm_backward<double>);
  kernels::add_rms_norm_forward.set_fast(add_rms_norm_forward<float>, add_rms_norm_forward<double>);
  kernels::add_rms_norm_backward.set_fast(add_rms_norm_backward<float>,
                                          add_rms_norm_backward<double>);
}

}  // namespace tg::fast
