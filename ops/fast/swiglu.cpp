// ops/fast/swiglu.cpp — swiglu's fast kernels: the formulas of ops/swiglu.cpp on float and
// double, vectorised (core/simd.h) and split across threads. Every element is computed on
// its own, so any split gives the same bits. One sweep: s = sigmoid(a) is computed once per
// element and used for both da and db. fast_sigmoid is the one silu's fast kernels use, so
// swiglu(x, x) == silu(x) * x holds on this path too.
#include <algorithm>

#include "core/parallel.h"
#include "core/simd.h"
#include "ops/fast/install.h"
#include "ops/swiglu.h"

namespace tg::fast {
namespace {

using detail::fast_sigmoid;
using detail::simd_for;
using kernels::GradOut;

/// out = a * s * b for n elements, s = sigmoid(a).
template <class F>
[[gnu::noinline]] void forward_span(const F* __restrict a, const F* __restrict b, F* __restrict out,
                                    int64_t n) {
  simd_for(n, [&](int64_t i) { out[i] = a[i] * fast_sigmoid(a[i]) * b[i]; });
}

/// da = dout * b * s * (1 + a (1 - s)) and db = dout * a * s over n elements, each written or
/// added (kAddA, kAddB); either of da, db may be null.
template <class F, bool kAddA, bool kAddB>
[[gnu::noinline]] void backward_span(const F* __restrict a, const F* __restrict b,
                                     const F* __restrict dout, F* __restrict da, F* __restrict db,
                                     int64_t n) {
  auto da_of = [&](int64_t i, F s) { return dout[i] * b[i] * (s * (F(1) + a[i] * (F(1) - s))); };
  auto put_a = [&](int64_t i, F v) { da[i] = kAddA ? da[i] + v : v; };
  auto put_b = [&](int64_t i, F v) { db[i] = kAddB ? db[i] + v : v; };
  if (da != nullptr && db != nullptr) {
    simd_for(n, [&](int64_t i) {
      const F s = fast_sigmoid(a[i]);
      put_a(i, da_of(i, s));
      put_b(i, dout[i] * a[i] * s);
    });
  } else if (da != nullptr) {
    simd_for(n, [&](int64_t i) { put_a(i, da_of(i, fast_sigmoid(a[i]))); });
  } else if (db != nullptr) {
    simd_for(n, [&](int64_t i) { put_b(i, dout[i] * a[i] * fast_sigmoid(a[i])); });
  }
}

/// Where gradient g's element o is: null when nobody asked for g.
template <class F>
F* grad_at(const GradOut<F>& g, int64_t o) {
  return g ? g.data + o : nullptr;
}

/// backward_span with its two write rules (GradOut's `add`) chosen at run time.
template <class F>
void backward_span_any(const F* a, const F* b, const F* dout, F* da, F* db, int64_t n, bool add_a,
                       bool add_b) {
  if (add_a && add_b) backward_span<F, true, true>(a, b, dout, da, db, n);
  else if (add_a) backward_span<F, true, false>(a, b, dout, da, db, n);
  else if (add_b) backward_span<F, false, true>(a, b, dout, da, db, n);
  else backward_span<F, false, false>(a, b, dout, da, db, n);
}

/// Calls span(offset_ab, offset_out, count) over the rows: a flat range (rows = 1) split by
/// elements, rows split by whole rows.
template <class Span>
void for_pieces(int64_t rows, int64_t h, int64_t stride, int64_t work, Span&& span) {
  if (rows == 1) {
    parallel_rows(h, work, [&](int64_t i0, int64_t i1) { span(i0, i0, i1 - i0); });
    return;
  }
  parallel_rows(rows, work * h, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) span(r * stride, r * h, h);
  });
}

template <class F>
void swiglu_forward(const F* a, const F* b, F* out, int64_t rows, int64_t h, int64_t stride) {
  for_pieces(rows, h, stride, 3,
             [&](int64_t o, int64_t oo, int64_t n) { forward_span(a + o, b + o, out + oo, n); });
}

template <class F>
void swiglu_backward(const F* a, const F* b, const F* dout, GradOut<F> da, GradOut<F> db,
                     int64_t rows, int64_t h, int64_t stride) {
  const bool add_a = da && da.add, add_b = db && db.add;
  for_pieces(rows, h, stride, 5, [&](int64_t o, int64_t oo, int64_t n) {
    backward_span_any(a + o, b + o, dout + oo, grad_at(da, o), grad_at(db, o), n, add_a, add_b);
  });
}

// bfloat16: each span is widened, computed and narrowed kChunk elements at a time, through
// float buffers on the stack that stay in L1, instead of widened copies of whole tensors
// (three more passes over memory, and allocations). The float code is the one above.
constexpr int64_t kChunk = 512;

void swiglu_forward_bf16(const BFloat16* a, const BFloat16* b, BFloat16* out, int64_t rows,
                         int64_t h, int64_t stride) {
  for_pieces(rows, h, stride, 3, [&](int64_t o, int64_t oo, int64_t n) {
    float af[kChunk], bf[kChunk], of[kChunk];
    for (int64_t c = 0; c < n; c += kChunk) {
      const int64_t len = std::min(kChunk, n - c);
      detail::widen(a + o + c, af, len);
      detail::widen(b + o + c, bf, len);
      forward_span(af, bf, of, len);
      detail::narrow(of, out + oo + c, len);
    }
  });
}

void swiglu_backward_bf16(const BFloat16* a, const BFloat16* b, const BFloat16* dout, BFloat16* da,
                          BFloat16* db, int64_t rows, int64_t h, int64_t stride) {
  for_pieces(rows, h, stride, 5, [&](int64_t o, int64_t oo, int64_t n) {
    float af[kChunk], bf[kChunk], gf[kChunk], daf[kChunk], dbf[kChunk];
    for (int64_t c = 0; c < n; c += kChunk) {
      const int64_t len = std::min(kChunk, n - c);
      detail::widen(a + o + c, af, len);
      detail::widen(b + o + c, bf, len);
      detail::widen(dout + oo + c, gf, len);
      backward_span<float, false, false>(af, bf, gf, da != nullptr ? daf : nullptr,
                                         db != nullptr ? dbf : nullptr, len);
      if (da != nullptr) detail::narrow(daf, da + o + c, len);
      if (db != nullptr) detail::narrow(dbf, db + o + c, len);
    }
  });
}

}  // namespace

void install_swiglu() {
  kernels::swiglu_forward.set_fast(swiglu_forward<float>, swiglu_forward<double>);
  kernels::swiglu_backward.set_fast(swiglu_backward<float>, swiglu_backward<double>);
  kernels::swiglu_forward_bf16.set_fast(swiglu_forward_bf16);
  kernels::swiglu_backward_bf16.set_fast(swiglu_backward_bf16);
}

}  // namespace tg::fast
