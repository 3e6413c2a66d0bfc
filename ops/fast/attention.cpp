// ops/fast/attention.cpp — attention's fast kernels: the math of ops/attention.cpp,
// rearranged so that nearly all the work is matrix products on the blocked GEMM
// (ops/fast/gemm.h). For one (b, h) slice and a block of query rows i0 <= i < i1:
//
//   forward:  S  = scale Q K^T              gemm NT   (rows x keys)
//             P  = softmax(S + mask) per row, L = logsumexp per row
//             O  = P V                      gemm NN
//   backward: S, P recomputed from Q, K and L (as the reference kernel does)
//             dP = dO V^T                   gemm NT
//             dS = P o (dP - delta)         delta_i = dO_i . O_i
//             dV += P^T dO                  gemm TN
//             dQ  = scale dS K              gemm NN
//             dK += scale dS^T Q            gemm TN
//
// Only one block of S (and dP) exists at a time: kBlockRows x Tk numbers of scratch, not the
// (Tq, Tk) matrix. Blocking the queries also serves the causal mask: the rows i0..i1-1 see
// keys j <= i < i1 only, so each block's products stop at key i1 and skip the masked upper
// triangle (at Tq = Tk = 128 and 64-row blocks, 25% less work; at T = 1024, 47%).
//
// (b, h) slices are independent, so threads split them; each slice runs on one thread in a
// fixed order, so the result does not depend on the thread count.
//
// bfloat16 (In = BFloat16, F = float): the same steps, with q, k, v, dO and O read as they
// are by the bfloat16 GEMM (exact products, float sums). S, P, dP and dS stay float; P and
// dS are rounded to bfloat16 (`operand`) just before the products that take them, as
// FlashAttention does. That rounding, relative 2^-9 per element, is the one error this path
// adds to the widening one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "ops/fast/attention_common.h"
#include "ops/fast/gemm.h"
#include "ops/fast/install.h"

namespace tg::fast {
namespace {

/// Query rows per block. Larger blocks pack each K and V panel fewer times, smaller ones skip
/// more of the causal triangle; at T = 128, 32, 64 and 128 rows ran within noise of each other.
constexpr int64_t kBlockRows = 64;

/// One (b, h) slice forward: out and lse as the reference, through the GEMM. `s` is scratch
/// for kBlockRows x Tk scores (and `pb` for P as a bfloat16 operand).
template <class F, class In>
void forward_slice(HeadRows<const In> q, HeadRows<const In> k, HeadRows<const In> v,
                   HeadRows<F> out, F* lse_all, F* s, In* pb, const AttentionDims& n, F scale,
                   const AttentionMask<F>& mask, int64_t b, int64_t h) {
  const In *q0 = q.row(b, h, 0), *k0 = k.row(b, h, 0), *v0 = v.row(b, h, 0);
  F* o0 = out.row(b, h, 0);
  F* lse = lse_all + (b * n.H + h) * n.Tq;
  for (int64_t i0 = 0; i0 < n.Tq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, n.Tq - i0);
    const int64_t keys = kernels::attention_key_end(n, mask.causal, i0 + rows);
    // S = scale Q K^T for this block (rows x keys, row stride `keys`)
    gemm(false, true, rows, keys, n.D, scale, q0 + i0 * q.st, q.st, k0, k.st, F(0), s, keys);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      F* si = s + r * keys;
      mask_row(si, 0, keys, mask, b, h, i);
      const F max = detail::row_max(si, keys);
      if (max == F(kNegInf)) {  // every key masked: p = 0, out_i = 0, L = -inf
        std::fill(si, si + keys, F(0));
        lse[i] = F(kNegInf);
        continue;
      }
      const F sum = exp_shifted(si, keys, max);
      detail::simd_for(keys, [&](int64_t j) { si[j] /= sum; });
      lse[i] = max + std::log(sum);
    }
    // O = P V (when keys == 0 the GEMM writes zeros)
    gemm(false, false, rows, n.Dv, keys, F(1), operand(s, pb, rows * keys), keys, v0, v.st, F(0),
         o0 + i0 * out.st, out.st);
  }
}

/// One (b, h) slice backward: dq, dk, dv, dmask as the reference, through the GEMM. `p` and
/// `dp` are scratch for kBlockRows x Tk numbers each (and `pb`, `dsb` for P and dS as
/// bfloat16 operands).
template <class F, class In>
void backward_slice(HeadRows<const In> dout, HeadRows<const In> q, HeadRows<const In> k,
                    HeadRows<const In> v, HeadRows<const In> out, const F* lse_all, HeadRows<F> dq,
                    HeadRows<F> dk, HeadRows<F> dv, F* dmask_all, F* p, F* dp, In* pb, In* dsb,
                    F* rows_scratch, const AttentionDims& n, F scale, const AttentionMask<F>& mask,
                    int64_t b, int64_t h) {
  const In *q0 = q.row(b, h, 0), *k0 = k.row(b, h, 0), *v0 = v.row(b, h, 0);
  const In *o0 = out.row(b, h, 0), *g0 = dout.row(b, h, 0);
  const int64_t bh = b * n.H + h;
  const F* lse = lse_all + bh * n.Tq;
  F* dmask = dmask_all == nullptr ? nullptr : dmask_all + bh * n.Tq * n.Tk;
  for (int64_t i0 = 0; i0 < n.Tq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, n.Tq - i0);
    const int64_t keys = kernels::attention_key_end(n, mask.causal, i0 + rows);
    const In* gb = g0 + i0 * dout.st;
    const In* qb = q0 + i0 * q.st;
    // P = exp(scale Q K^T + mask - L), recomputed; dP = dO V^T
    gemm(false, true, rows, keys, n.D, scale, qb, q.st, k0, k.st, F(0), p, keys);
    gemm(false, true, rows, keys, n.Dv, F(1), gb, dout.st, v0, v.st, F(0), dp, keys);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      F* pi = p + r * keys;
      F* dsi = dp + r * keys;      // dP becomes dS in place
      if (lse[i] == F(kNegInf)) {  // fully masked row: p = 0, so ds = 0
        std::fill(pi, pi + keys, F(0));
        std::fill(dsi, dsi + keys, F(0));
      } else {
        mask_row(pi, 0, keys, mask, b, h, i);
        exp_shifted(pi, keys, lse[i]);
        const F delta = row_dot(gb + r * dout.st, o0 + i * out.st, n.Dv, rows_scratch);
        detail::simd_for(keys, [&](int64_t j) { dsi[j] = pi[j] * (dsi[j] - delta); });
      }
      if (dmask != nullptr) {
        std::copy(dsi, dsi + keys, dmask + i * n.Tk);
        std::fill(dmask + i * n.Tk + keys, dmask + (i + 1) * n.Tk, F(0));  // beyond the block
      }
    }
    if (dv) {  // dV += P^T dO
      gemm(true, false, keys, n.Dv, rows, F(1), operand(p, pb, rows * keys), keys, gb, dout.st,
           F(1), dv.row(b, h, 0), dv.st);
    }
    const In* ds = dq || dk ? operand(dp, dsb, rows * keys) : nullptr;
    if (dq) {  // dQ = scale dS K (+ dQ, when adding into an existing .grad)
      gemm(false, false, rows, n.D, keys, scale, ds, keys, k0, k.st, F(dq.add ? 1 : 0),
           dq.row(b, h, i0), dq.st);
    }
    if (dk) {  // dK += scale dS^T Q
      gemm(true, false, keys, n.D, rows, scale, ds, keys, qb, q.st, F(1), dk.row(b, h, 0), dk.st);
    }
  }
}

/// Numbers in one block of scores (kBlockRows x Tk, fewer rows when Tq is smaller).
size_t block_size(const AttentionDims& n) {
  return static_cast<size_t>(std::min(kBlockRows, n.Tq) * n.Tk);
}

/// Scratch for one block of P (or dS) as a GEMM operand: none when In is F itself.
template <class F, class In>
size_t operand_size(const AttentionDims& n) {
  return std::is_same_v<In, F> ? 0 : block_size(n);
}

template <class F, class In = F>
void attention_forward(HeadRows<const In> q, HeadRows<const In> k, HeadRows<const In> v,
                       HeadRows<F> out, F* lse, const AttentionDims& n, F scale,
                       const AttentionMask<F>& mask) {
  parallel_rows(n.B * n.H, slice_work(n), [&](int64_t begin, int64_t end) {
    std::vector<F> s(block_size(n));
    std::vector<In> pb(operand_size<F, In>(n));
    for (int64_t bh = begin; bh < end; ++bh) {
      forward_slice(q, k, v, out, lse, s.data(), pb.data(), n, scale, mask, bh / n.H, bh % n.H);
    }
  });
}

/// Threads take whole kv slices (a batch and kv head: the query heads of its group, one but
/// under grouped-query attention), so every dk_j and dv_j sum runs on one thread in one order.
template <class F, class In = F>
void attention_backward(HeadRows<const In> dout, HeadRows<const In> q, HeadRows<const In> k,
                        HeadRows<const In> v, HeadRows<const In> out, const F* lse, HeadRows<F> dq,
                        HeadRows<F> dk, HeadRows<F> dv, F* dmask, const AttentionDims& n, F scale,
                        const AttentionMask<F>& mask) {
  const int64_t kv_heads = n.H / n.group;
  parallel_rows(n.B * kv_heads, 2 * n.group * slice_work(n), [&](int64_t begin, int64_t end) {
    std::vector<F> p(block_size(n)), dp(block_size(n));
    std::vector<In> pb(operand_size<F, In>(n)), dsb(operand_size<F, In>(n));
    std::vector<F> rows_scratch(std::is_same_v<In, F> ? 0 : static_cast<size_t>(2 * n.Dv));
    for (int64_t s = begin; s < end; ++s) {
      const int64_t b = s / kv_heads, h0 = s % kv_heads * n.group;
      zero_slice(dk, b, h0, n.Tk, n.D);  // dk and dv sum over every query block and head
      zero_slice(dv, b, h0, n.Tk, n.Dv);
      for (int64_t h = h0; h < h0 + n.group; ++h) {
        backward_slice(dout, q, k, v, out, lse, dq, dk, dv, dmask, p.data(), dp.data(), pb.data(),
                       dsb.data(), rows_scratch.data(), n, scale, mask, b, h);
      }
    }
  });
}

}  // namespace

void install_attention() {
  kernels::attention_forward.set_fast(attention_forward<float>, attention_forward<double>);
  kernels::attention_backward.set_fast(attention_backward<float>, attention_backward<double>);
  kernels::attention_forward_bf16.set_fast(attention_forward<float, BFloat16>);
  kernels::attention_backward_bf16.set_fast(attention_backward<float, BFloat16>);
}

}  // namespace tg::fast
