// ops/attention_tiled.cpp — attention's second kernel (AttentionKernel::kTiled): a tile of
// queries against a tile of keys at a time, the softmax folded in tile by tile.
// Tests: tests/ops/attention_tiled_test.cpp. Course: docs/course/21-tiled-attention.md.
//
// Why tiles. The row kernel of ops/attention.cpp takes one query against all Tk keys, and its
// fast twin a block of query rows against all Tk keys (a rows x Tk block of scores). The work
// of one step grows with T, so past some T it no longer fits in a cache. Here every step
// touches tile_q query rows, tile_k key and value rows and a tile_q x tile_k block of scores:
// sizes chosen once to fit the cache (on a GPU, the on-chip memory), whatever T is. The price:
// a row's softmax now arrives tile by tile, and its max is known only after the last tile.
//
// The online softmax. For a set A of keys, keep per query row, relative to A's own max:
//   m_A = max_{j in A} s_j     l_A = sum_{j in A} e^(s_j - m_A)     o_A = sum_{j in A} e^(s_j -
//   m_A) v_j
// Two disjoint sets A and B merge with m = max(m_A, m_B): each term e^(s_j - m_A) becomes
// e^(s_j - m) = e^(s_j - m_A) e^(m_A - m), so
//   l_{A+B} = e^(m_A - m) l_A + e^(m_B - m) l_B        o_{A+B} = e^(m_A - m) o_A + e^(m_B - m) o_B
// Both factors are <= 1 and the one of the set that holds the max is exactly 1: nothing
// overflows, however large the scores. The merge is associative, so the keys may come in any
// grouping (one tile at a time here; split across threads in "flash decoding"). After the
// last tile: out_i = o / l, and L_i = m + log l is the logsumexp the row kernel saves.
// The empty set is (m, l, o) = (-inf, 0, 0); merging it changes nothing. A row whose keys are
// all masked stays empty: zeros and L = -inf, chapter 12's safe softmax.
//
// Backward. L_i is saved, so p_ij = e^(s_ij - L_i) is exact in any tile, with no rescaling:
// chapter 12's backward, one tile at a time,
//   dv_j += p_ij dout_i      dp_ij = dout_i . v_j      ds_ij = p_ij (dp_ij - delta_i)
//   dq_i += scale ds_ij k_j  dk_j += scale ds_ij q_i   dmask_ij = ds_ij
// with delta_i = dout_i . out_i computed once per row before the tiles. Key tiles run
// outside and query tiles inside (FlashAttention-2's order): dk_j and dv_j sum over every
// query, so a key tile keeps them in tile_k x (D + Dv) scratch for its whole life and adds
// them once; dq_i receives one share per key tile, added in place. Under grouped-query
// attention a kv head serves several query heads: the key tile's scratch sums over all of
// them before it is added. Each sum runs over its terms in the row kernel's order, so given
// the same L the gradients are the same bits.
//
// The causal rule (key j visible to query i when j <= i) skips whole tiles: the forward stops
// at the first key no row of the tile may see, and the backward starts a key tile's query
// tiles at the one holding row j0, the first that may see key j0.
//
// Scratch: tile_q x tile_k scores (forward), tile_k x (D + Dv) (backward) and Tq deltas.
// Nothing here is Tq x Tk, and the saved tensors are the row kernel's: q, k, v, out, L.
//
// This is the reference: plain loops on one thread. The arithmetic is the row kernel's; the
// tiles change its order, and the order is what this file teaches.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/attention.h"

namespace tg {
namespace {

using kernels::AttentionDims;
using kernels::AttentionMask;
using kernels::AttentionTiles;
using kernels::HeadRows;

using kernels::kNegInf;

// ---------------------------------------------------------------- the online softmax
/// The softmax of one query row over a set of keys, relative to the set's own max (the top
/// of the file): max = m, sum = l, acc = o (Dv numbers, memory the caller owns). The empty
/// set: -inf, 0 and zeros.
template <class F>
struct Partial {
  F max;
  F sum;
  F* acc;
};

/// a becomes the partial of a's keys and b's keys together (two disjoint sets), by the
/// rescaling derived at the top; b is left as it was.
template <class F>
void online_merge(Partial<F>& a, const Partial<F>& b, int64_t Dv) {
  // exercise attention.online_merge: begin
  if (b.max == F(kNegInf)) return;  // b holds no visible key: nothing to add
  const F max = std::max(a.max, b.max);
  const F ca = std::exp(a.max - max);  // 0 while a is empty (a.max = -inf)
  const F cb = std::exp(b.max - max);
  a.sum = a.sum * ca + b.sum * cb;
  for (int64_t c = 0; c < Dv; ++c) a.acc[c] = a.acc[c] * ca + b.acc[c] * cb;
  a.max = max;
  // exercise attention.online_merge: end
}

/// The partial of one query row over the keys j0 <= j < j0 + cols of slice (b, h), from their
/// scores s (cols >= 1 numbers, -inf for a hidden key), into `part` (its acc: Dv numbers).
template <class F>
void tile_partial(const F* s, int64_t cols, HeadRows<const F> v, const AttentionDims& n, int64_t b,
                  int64_t h, int64_t j0, Partial<F>& part) {
  part.max = *std::max_element(s, s + cols);
  part.sum = 0;
  std::fill(part.acc, part.acc + n.Dv, F(0));
  if (part.max == F(kNegInf)) return;  // every key of the tile hidden: the empty partial
  for (int64_t c = 0; c < cols; ++c) {
    if (s[c] == F(kNegInf)) continue;
    const F e = std::exp(s[c] - part.max);
    part.sum += e;
    const F* vj = v.row(b, h, j0 + c);
    for (int64_t x = 0; x < n.Dv; ++x) part.acc[x] += e * vj[x];
  }
}

// ---------------------------------------------------------------- forward
/// For each (b, h) and each tile of query rows: the running partial of every row starts
/// empty, with its acc in the row's own output; each key tile's scores (tile_q x tile_k
/// scratch) make one partial per row, merged in; at the end out_i = acc / sum and
/// L_i = max + log sum.
template <class F>
void attention_tiled_forward(HeadRows<const F> q, HeadRows<const F> k, HeadRows<const F> v,
                             HeadRows<F> out, F* lse, const AttentionDims& n, F scale,
                             const AttentionMask<F>& mask, AttentionTiles tiles) {
  std::vector<F> s(static_cast<size_t>(tiles.q * tiles.k));  // one tile of scores
  std::vector<Partial<F>> running(static_cast<size_t>(tiles.q));
  std::vector<F> tile_acc(static_cast<size_t>(n.Dv));
  for (int64_t b = 0; b < n.B; ++b) {
    for (int64_t h = 0; h < n.H; ++h) {
      for (int64_t i0 = 0; i0 < n.Tq; i0 += tiles.q) {
        const int64_t rows = std::min(tiles.q, n.Tq - i0);
        for (int64_t r = 0; r < rows; ++r) {
          F* oi = out.row(b, h, i0 + r);
          std::fill(oi, oi + n.Dv, F(0));
          running[r] = {F(kNegInf), F(0), oi};
        }
        const int64_t key_end = kernels::attention_key_end(n, mask.causal, i0 + rows);
        for (int64_t j0 = 0; j0 < key_end; j0 += tiles.k) {
          const int64_t cols = std::min(tiles.k, key_end - j0);
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = i0 + r;
            for (int64_t c = 0; c < cols; ++c) {
              s[r * tiles.k + c] = kernels::attention_score(q.row(b, h, i), k.row(b, h, j0 + c),
                                                            n.D, scale, mask, b, h, i, j0 + c);
            }
          }
          for (int64_t r = 0; r < rows; ++r) {
            Partial<F> part{F(0), F(0), tile_acc.data()};
            tile_partial(s.data() + r * tiles.k, cols, v, n, b, h, j0, part);
            online_merge(running[r], part, n.Dv);
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          const Partial<F>& row = running[r];
          F* L = lse + (b * n.H + h) * n.Tq + i0 + r;
          if (row.max == F(kNegInf)) {  // every key masked: out_i stays 0 (safe softmax)
            *L = F(kNegInf);
            continue;
          }
          for (int64_t x = 0; x < n.Dv; ++x) row.acc[x] /= row.sum;
          *L = row.max + std::log(row.sum);
        }
      }
    }
  }
}

// ---------------------------------------------------------------- backward
/// What the tiles of one (b, h) slice's backward share.
template <class F>
struct SliceGrads {
  HeadRows<const F> dout, q, k, v;
  HeadRows<F> dq;  // dq_i, added in place (null: not wanted)
  const F* lse;    // the slice's L_i (Tq)
  const F* delta;  // the slice's delta_i = dout_i . out_i (Tq)
  F* dmask;        // the slice's dS (Tq x Tk, zeroed), or null
  F* dk_tile;      // the key tile's dk (tile_k x D, zeroed), or null
  F* dv_tile;      // the key tile's dv (tile_k x Dv, zeroed), or null
  int64_t b, h;
};

/// Query rows i0 <= i < i0 + rows against keys j0 <= j < j0 + cols: p_ij recomputed from the
/// score and L_i, then dv and dk into the key tile's scratch (row c for key j0 + c), dq_i in
/// place and dS into dmask, by the formulas at the top.
template <class F>
void backward_tile(const SliceGrads<F>& g, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                   const AttentionDims& n, F scale, const AttentionMask<F>& mask) {
  // exercise attention.tiled_backward: begin
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    if (g.lse[i] == F(kNegInf)) continue;  // fully masked row: zero gradient
    const F* qi = g.q.row(g.b, g.h, i);
    const F* gi = g.dout.row(g.b, g.h, i);
    F* dqi = g.dq ? g.dq.row(g.b, g.h, i) : nullptr;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t j = j0 + c;
      const F* kj = g.k.row(g.b, g.h, j);
      const F s = kernels::attention_score(qi, kj, n.D, scale, mask, g.b, g.h, i, j);
      const F p = std::exp(s - g.lse[i]);
      if (p == F(0)) continue;  // a hidden key (s = -inf), or a weight below float's range
      const F* vj = g.v.row(g.b, g.h, j);
      F dp = 0;
      for (int64_t x = 0; x < n.Dv; ++x) dp += gi[x] * vj[x];
      if (g.dv_tile != nullptr) {
        for (int64_t x = 0; x < n.Dv; ++x) g.dv_tile[c * n.Dv + x] += p * gi[x];
      }
      const F ds = p * (dp - g.delta[i]);
      if (dqi != nullptr) {
        for (int64_t d = 0; d < n.D; ++d) dqi[d] += scale * ds * kj[d];
      }
      if (g.dk_tile != nullptr) {
        for (int64_t d = 0; d < n.D; ++d) g.dk_tile[c * n.D + d] += scale * ds * qi[d];
      }
      if (g.dmask != nullptr) g.dmask[i * n.Tk + j] = ds;
    }
  }
  // exercise attention.tiled_backward: end
}

/// Adds a key tile's scratch rows (cols x X) into rows j0.. of gradient `grad` (zeroed
/// before the first tile, unless it is an existing .grad: the write rule of ops/kernels.h).
template <class F>
void add_tile(const F* tile, HeadRows<F> grad, int64_t b, int64_t h, int64_t j0, int64_t cols,
              int64_t X) {
  for (int64_t c = 0; c < cols; ++c) {
    F* gj = grad.row(b, h, j0 + c);
    for (int64_t x = 0; x < X; ++x) gj[x] += tile[c * X + x];
  }
}

/// For each batch and kv head: the deltas of its query heads, then key tiles outside and, for
/// each query head of the kv head's group (one head unless grouped-query attention), the
/// query tiles inside; a key tile's dk and dv sum over all of them and are added once.
template <class F>
void attention_tiled_backward(HeadRows<const F> dout, HeadRows<const F> q, HeadRows<const F> k,
                              HeadRows<const F> v, HeadRows<const F> out, const F* lse,
                              HeadRows<F> dq, HeadRows<F> dk, HeadRows<F> dv, F* dmask,
                              const AttentionDims& n, F scale, const AttentionMask<F>& mask,
                              AttentionTiles tiles) {
  kernels::zero_rows_unless_adding(dq, n.B, n.H, n.Tq, n.D);
  kernels::zero_rows_unless_adding(dk, n.B, n.H, n.Tk, n.D);
  kernels::zero_rows_unless_adding(dv, n.B, n.H, n.Tk, n.Dv);
  if (dmask != nullptr) std::fill(dmask, dmask + n.B * n.H * n.Tq * n.Tk, F(0));
  std::vector<F> delta(static_cast<size_t>(n.group * n.Tq));
  std::vector<F> dk_tile(dk ? static_cast<size_t>(tiles.k * n.D) : 0);
  std::vector<F> dv_tile(dv ? static_cast<size_t>(tiles.k * n.Dv) : 0);
  std::vector<SliceGrads<F>> heads;  // the query heads of one kv head
  for (int64_t b = 0; b < n.B; ++b) {
    for (int64_t h0 = 0; h0 < n.H; h0 += n.group) {  // the first query head of a kv head
      heads.clear();
      for (int64_t h = h0; h < h0 + n.group; ++h) {
        const int64_t bh = b * n.H + h;
        F* dh = delta.data() + (h - h0) * n.Tq;
        for (int64_t i = 0; i < n.Tq; ++i) {
          const F* gi = dout.row(b, h, i);
          const F* oi = out.row(b, h, i);
          F d = 0;
          for (int64_t x = 0; x < n.Dv; ++x) d += gi[x] * oi[x];
          dh[i] = d;
        }
        heads.push_back({dout, q, k, v, dq, lse + bh * n.Tq, dh,
                         dmask != nullptr ? dmask + bh * n.Tq * n.Tk : nullptr,
                         dk ? dk_tile.data() : nullptr, dv ? dv_tile.data() : nullptr, b, h});
      }
      for (int64_t j0 = 0; j0 < n.Tk; j0 += tiles.k) {
        const int64_t cols = std::min(tiles.k, n.Tk - j0);
        std::fill(dk_tile.begin(), dk_tile.end(), F(0));
        std::fill(dv_tile.begin(), dv_tile.end(), F(0));
        // Causal: rows i < j0 see no key of this tile; start at the query tile holding j0.
        const int64_t first = mask.causal ? j0 / tiles.q * tiles.q : 0;
        for (const SliceGrads<F>& g : heads) {
          for (int64_t i0 = first; i0 < n.Tq; i0 += tiles.q) {
            backward_tile(g, i0, std::min(tiles.q, n.Tq - i0), j0, cols, n, scale, mask);
          }
        }
        if (dk) add_tile(dk_tile.data(), dk, b, h0, j0, cols, n.D);
        if (dv) add_tile(dv_tile.data(), dv, b, h0, j0, cols, n.Dv);
      }
    }
  }
}

}  // namespace

constinit kernels::KernelPair<kernels::AttentionTiledForward, float, double>
    kernels::attention_tiled_forward{tg::attention_tiled_forward<float>,
                                     tg::attention_tiled_forward<double>};
constinit kernels::KernelPair<kernels::AttentionTiledBackward, float, double>
    kernels::attention_tiled_backward{tg::attention_tiled_backward<float>,
                                      tg::attention_tiled_backward<double>};

}  // namespace tg
