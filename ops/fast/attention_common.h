// ops/fast/attention_common.h — what attention's two fast kernels share: the row kernel
// (ops/fast/attention.cpp) and the tiled one (ops/fast/attention_tiled.cpp). The exponential,
// the mask, and the rounding of a GEMM operand; both kernels run their products on the
// blocked GEMM (ops/fast/gemm.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/simd.h"
#include "ops/attention.h"

namespace tg::fast {

using kernels::AttentionDims;
using kernels::AttentionMask;
using kernels::HeadRows;

using kernels::kNegInf;

/// Work per (b, h) slice, in core/parallel.h's units (16 multiply-adds).
inline int64_t slice_work(const AttentionDims& n) { return n.Tq * n.Tk * (n.D + n.Dv) / 16; }

/// e^x: the vectorisable version for float, libm's for double (only the tests use double).
/// Always inlined: a call per element would keep exp_shifted's loop scalar.
template <class F>
[[gnu::always_inline]] inline F exp_of(F x) {
  if constexpr (std::is_same_v<F, float>) {
    return detail::fast_exp(x);
  } else {
    return std::exp(x);
  }
}

/// x_j = e^(x_j - shift) for j < len; returns sum_j x_j, in kLanes partial sums (the loop
/// is written out: a lane_sum whose term also stores stays scalar).
template <class F>
F exp_shifted(F* x, int64_t len, F shift) {
  constexpr int64_t W = detail::kLanes;
  F acc[W] = {};
  int64_t j = 0;
  for (; j + W <= len; j += W) {
    for (int64_t l = 0; l < W; ++l) {
      x[j + l] = exp_of(x[j + l] - shift);
      acc[l] += x[j + l];
    }
  }
  F sum = 0;
  for (int64_t l = 0; l < W; ++l) sum += acc[l];
  for (; j < len; ++j) {
    x[j] = exp_of(x[j] - shift);
    sum += x[j];
  }
  return sum;
}

/// Applies the mask to the scores s_c = scale q_i . k_(j0 + c) of query i against keys
/// j0 <= j < j0 + len: -inf where key j is masked for query i, + m_ij where the mask is a
/// float bias.
template <class F>
void mask_row(F* s, int64_t j0, int64_t len, const AttentionMask<F>& m, int64_t b, int64_t h,
              int64_t i) {
  if (m.causal) {
    for (int64_t c = std::max<int64_t>(i + 1 - j0, 0); c < len; ++c) s[c] = F(kNegInf);
  } else if (m.keep != nullptr) {
    for (int64_t c = 0; c < len; ++c) {
      if (!m.keep[m.at(b, h, i, j0 + c)]) s[c] = F(kNegInf);
    }
  } else if (m.bias != nullptr) {
    for (int64_t c = 0; c < len; ++c) s[c] += m.bias[m.at(b, h, i, j0 + c)];
  }
}

/// The first `count` numbers of x as a GEMM operand of type In: x itself, or rounded into
/// `scratch` (float -> bfloat16).
template <class In, class F>
const In* operand(const F* x, In* scratch, int64_t count) {
  if constexpr (std::is_same_v<In, F>) {
    return x;
  } else {
    detail::narrow(x, scratch, count);
    return scratch;
  }
}

/// a . b over n elements, in kLanes partial sums; bfloat16 rows are first widened into
/// `scratch` (2n floats), so that the products are vector code.
template <class F, class In>
F row_dot(const In* a, const In* b, int64_t n, F* scratch) {
  if constexpr (std::is_same_v<In, F>) {
    return detail::lane_sum<F>(n, [&](int64_t c) { return a[c] * b[c]; });
  } else {
    detail::widen(a, scratch, n);
    detail::widen(b, scratch + n, n);
    return detail::lane_sum<F>(n, [&](int64_t c) { return scratch[c] * scratch[n + c]; });
  }
}

/// Sets the rows of one (b, h) slice of a gradient to zero unless it adds into an existing
/// .grad: dk and dv are summed over every query block.
template <class F>
void zero_slice(HeadRows<F> g, int64_t b, int64_t h, int64_t T, int64_t X) {
  if (!g || g.add) return;
  for (int64_t t = 0; t < T; ++t) std::fill(g.row(b, h, t), g.row(b, h, t) + X, F(0));
}

}  // namespace tg::fast
