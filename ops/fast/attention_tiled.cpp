// ops/fast/attention_tiled.cpp — the tiled kernel's fast twin: ops/attention_tiled.cpp's
// order of work, with each tile's products on the blocked GEMM (ops/fast/gemm.h). For one
// (b, h) slice, a tile of query rows Q_t (tile_q x D) and a tile of keys K_t, V_t (tile_k):
//
//   forward, key tiles in order, per query tile:
//     S   = scale Q_t K_t^T (+ mask)               gemm NT   (tile_q x tile_k)
//     m'  = max(m, rowmax S)   a = e^(m - m')     per row: the online rescaling
//     P   = e^(S - m'),  l = a l + rowsum P
//     O   = a O + P V_t                            gemm NN, after scaling O's rows by a
//   then O /= l and L = m + log l.
//   backward, key tiles outside, query tiles inside:
//     P   = e^(scale Q_t K_t^T + mask - L)         gemm NT
//     dP  = dO_t V_t^T                             gemm NT
//     dS  = P o (dP - delta)
//     dV_t += P^T dO_t,  dK_t += scale dS^T Q_t    gemm TN, into the key tile's scratch
//     dQ_t += scale dS K_t                         gemm NN, in place
//
// Only tile_q x tile_k scores exist at a time, and the key tile's dK, dV stay in scratch
// until its last query tile: the working set is fixed by the tiles, not by T. Slices run on
// separate threads, each in a fixed order, so the result does not depend on the thread
// count: the forward's are (b, h), the backward's a batch and kv head, with every query head
// that shares it (grouped-query attention). float and double; bfloat16 inputs widen to float
// for this kernel.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "ops/fast/attention_common.h"
#include "ops/fast/gemm.h"
#include "ops/fast/install.h"

namespace tg::fast {
namespace {

using kernels::AttentionTiles;

/// One (b, h) slice forward. `s` holds tile_q x tile_k scores; m and l the running max and
/// sum of the tile's rows; the running output O lives in `out` itself.
template <class F>
void tiled_forward_slice(HeadRows<const F> q, HeadRows<const F> k, HeadRows<const F> v,
                         HeadRows<F> out, F* lse_all, F* s, F* m, F* l, const AttentionDims& n,
                         F scale, const AttentionMask<F>& mask, AttentionTiles tiles, int64_t b,
                         int64_t h) {
  F* lse = lse_all + (b * n.H + h) * n.Tq;
  for (int64_t i0 = 0; i0 < n.Tq; i0 += tiles.q) {
    const int64_t rows = std::min(tiles.q, n.Tq - i0);
    for (int64_t r = 0; r < rows; ++r) {
      F* oi = out.row(b, h, i0 + r);
      std::fill(oi, oi + n.Dv, F(0));
      m[r] = F(kNegInf);
      l[r] = F(0);
    }
    const int64_t key_end = kernels::attention_key_end(n, mask.causal, i0 + rows);
    for (int64_t j0 = 0; j0 < key_end; j0 += tiles.k) {
      const int64_t cols = std::min(tiles.k, key_end - j0);
      gemm(false, true, rows, cols, n.D, scale, q.row(b, h, i0), q.st, k.row(b, h, j0), k.st, F(0),
           s, cols);
      for (int64_t r = 0; r < rows; ++r) {
        F* sr = s + r * cols;
        mask_row(sr, j0, cols, mask, b, h, i0 + r);
        const F max = std::max(m[r], detail::row_max(sr, cols));
        if (max == F(kNegInf)) {  // no visible key yet: P's row is 0, the row stays empty
          std::fill(sr, sr + cols, F(0));
          continue;
        }
        const F a = exp_of(m[r] - max);  // 0 for the first visible tile (m = -inf)
        l[r] = a * l[r] + exp_shifted(sr, cols, max);
        m[r] = max;
        if (a != F(1)) {
          F* oi = out.row(b, h, i0 + r);
          detail::simd_for(n.Dv, [&](int64_t x) { oi[x] *= a; });
        }
      }
      gemm(false, false, rows, n.Dv, cols, F(1), s, cols, v.row(b, h, j0), v.st, F(1),
           out.row(b, h, i0), out.st);
    }
    for (int64_t r = 0; r < rows; ++r) {
      if (m[r] == F(kNegInf)) {  // every key masked: zeros (safe softmax)
        lse[i0 + r] = F(kNegInf);
        continue;
      }
      F* oi = out.row(b, h, i0 + r);
      const F inv = F(1) / l[r];
      detail::simd_for(n.Dv, [&](int64_t x) { oi[x] *= inv; });
      lse[i0 + r] = m[r] + std::log(l[r]);
    }
  }
}

/// Scratch of one thread's backward: a tile of P and of dP (tile_q x tile_k), the key tile's
/// dK and dV, and the deltas of the kv slice's query heads.
template <class F>
struct BackwardScratch {
  std::vector<F> p, dp, dk, dv, delta;
  BackwardScratch(const AttentionDims& n, AttentionTiles t)
      : p(static_cast<size_t>(t.q * t.k)),
        dp(p.size()),
        dk(static_cast<size_t>(t.k * n.D)),
        dv(static_cast<size_t>(t.k * n.Dv)),
        delta(static_cast<size_t>(n.group * n.Tq)) {}
};

/// A key tile's dK or dV scratch (cols x X) into rows j0.. of `grad`: written, or added to an
/// existing .grad.
template <class F>
void store_tile(const F* tile, HeadRows<F> grad, int64_t b, int64_t h, int64_t j0, int64_t cols,
                int64_t X) {
  for (int64_t c = 0; c < cols; ++c) {
    F* gj = grad.row(b, h, j0 + c);
    const F* tc = tile + c * X;
    if (grad.add) detail::simd_for(X, [&](int64_t x) { gj[x] += tc[x]; });
    else std::copy(tc, tc + X, gj);
  }
}

/// One kv slice backward (batch b, the query heads h0 .. h0 + group - 1 that share a kv
/// head), in FlashAttention-2's order (see the top): a key tile's dK and dV sum over every
/// query tile of every head of the group, then are stored once.
template <class F>
void tiled_backward_slice(HeadRows<const F> dout, HeadRows<const F> q, HeadRows<const F> k,
                          HeadRows<const F> v, HeadRows<const F> out, const F* lse_all,
                          HeadRows<F> dq, HeadRows<F> dk, HeadRows<F> dv, F* dmask_all,
                          BackwardScratch<F>& w, const AttentionDims& n, F scale,
                          const AttentionMask<F>& mask, AttentionTiles tiles, int64_t b,
                          int64_t h0) {
  for (int64_t h = h0; h < h0 + n.group; ++h) {
    if (dq && !dq.add) zero_slice(dq, b, h, n.Tq, n.D);
    F* delta = w.delta.data() + (h - h0) * n.Tq;
    for (int64_t i = 0; i < n.Tq; ++i) {
      const F *gi = dout.row(b, h, i), *oi = out.row(b, h, i);
      delta[i] = detail::lane_sum<F>(n.Dv, [&](int64_t x) { return gi[x] * oi[x]; });
    }
  }
  for (int64_t j0 = 0; j0 < n.Tk; j0 += tiles.k) {
    const int64_t cols = std::min(tiles.k, n.Tk - j0);
    std::fill(w.dk.begin(), w.dk.end(), F(0));
    std::fill(w.dv.begin(), w.dv.end(), F(0));
    const F *kt = k.row(b, h0, j0), *vt = v.row(b, h0, j0);
    for (int64_t h = h0; h < h0 + n.group; ++h) {
      const int64_t bh = b * n.H + h;
      const F* lse = lse_all + bh * n.Tq;
      const F* delta = w.delta.data() + (h - h0) * n.Tq;
      F* dmask = dmask_all == nullptr ? nullptr : dmask_all + bh * n.Tq * n.Tk;
      for (int64_t i0 = mask.causal ? j0 / tiles.q * tiles.q : 0; i0 < n.Tq; i0 += tiles.q) {
        const int64_t rows = std::min(tiles.q, n.Tq - i0);
        const F *qt = q.row(b, h, i0), *gt = dout.row(b, h, i0);
        F *p = w.p.data(), *ds = w.dp.data();
        gemm(false, true, rows, cols, n.D, scale, qt, q.st, kt, k.st, F(0), p, cols);
        gemm(false, true, rows, cols, n.Dv, F(1), gt, dout.st, vt, v.st, F(0), ds, cols);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = i0 + r;
          F *pr = p + r * cols, *dsr = ds + r * cols;  // dP becomes dS in place
          if (lse[i] == F(kNegInf)) {                  // fully masked row: no gradient
            std::fill(pr, pr + cols, F(0));
            std::fill(dsr, dsr + cols, F(0));
          } else {
            mask_row(pr, j0, cols, mask, b, h, i);
            exp_shifted(pr, cols, lse[i]);
            const F d = delta[i];
            detail::simd_for(cols, [&](int64_t c) { dsr[c] = pr[c] * (dsr[c] - d); });
          }
          if (dmask != nullptr) std::copy(dsr, dsr + cols, dmask + i * n.Tk + j0);
        }
        if (dv) {
          gemm(true, false, cols, n.Dv, rows, F(1), p, cols, gt, dout.st, F(1), w.dv.data(), n.Dv);
        }
        if (dk) {
          gemm(true, false, cols, n.D, rows, scale, ds, cols, qt, q.st, F(1), w.dk.data(), n.D);
        }
        if (dq) {
          gemm(false, false, rows, n.D, cols, scale, ds, cols, kt, k.st, F(1), dq.row(b, h, i0),
               dq.st);
        }
      }
    }
    if (dk) store_tile(w.dk.data(), dk, b, h0, j0, cols, n.D);
    if (dv) store_tile(w.dv.data(), dv, b, h0, j0, cols, n.Dv);
  }
}

template <class F>
void attention_tiled_forward(HeadRows<const F> q, HeadRows<const F> k, HeadRows<const F> v,
                             HeadRows<F> out, F* lse, const AttentionDims& n, F scale,
                             const AttentionMask<F>& mask, AttentionTiles tiles) {
  parallel_rows(n.B * n.H, slice_work(n), [&](int64_t begin, int64_t end) {
    std::vector<F> s(static_cast<size_t>(tiles.q * tiles.k));
    std::vector<F> m(static_cast<size_t>(tiles.q)), l(m.size());
    for (int64_t bh = begin; bh < end; ++bh) {
      tiled_forward_slice(q, k, v, out, lse, s.data(), m.data(), l.data(), n, scale, mask, tiles,
                          bh / n.H, bh % n.H);
    }
  });
}

template <class F>
void attention_tiled_backward(HeadRows<const F> dout, HeadRows<const F> q, HeadRows<const F> k,
                              HeadRows<const F> v, HeadRows<const F> out, const F* lse,
                              HeadRows<F> dq, HeadRows<F> dk, HeadRows<F> dv, F* dmask,
                              const AttentionDims& n, F scale, const AttentionMask<F>& mask,
                              AttentionTiles tiles) {
  if (dmask != nullptr) std::fill(dmask, dmask + n.B * n.H * n.Tq * n.Tk, F(0));
  const int64_t kv_heads = n.H / n.group;
  parallel_rows(n.B * kv_heads, 2 * n.group * slice_work(n), [&](int64_t begin, int64_t end) {
    BackwardScratch<F> w(n, tiles);
    for (int64_t s = begin; s < end; ++s) {
      tiled_backward_slice(dout, q, k, v, out, lse, dq, dk, dv, dmask, w, n, scale, mask, tiles,
                           s / kv_heads, s % kv_heads * n.group);
    }
  });
}

}  // namespace

void install_attention_tiled() {
  kernels::attention_tiled_forward.set_fast(attention_tiled_forward<float>,
                                            attention_tiled_forward<double>);
  kernels::attention_tiled_backward.set_fast(attention_tiled_backward<float>,
                                             attention_tiled_backward<double>);
}

}  // namespace tg::fast
