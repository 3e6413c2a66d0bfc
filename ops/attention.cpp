// ops/attention.cpp — scaled dot-product attention: the plain kernels forward and backward,
// then the Function.
//
// Shape legend: B = batch, H = heads, Tq = queries, Tk = keys, D = head dim, Dv = value dim.
// Every (b, h, i) is one independent "row": query q_i (D) against the Tk keys and values of
// the same batch and head.
//
// Forward, per row (m_ij is the additive mask, -inf where a key is masked out):
//   s_j   = scale * q_i . k_j + m_ij                 (Tk scores)
//   p_j   = exp(s_j - L),  L = log sum_j exp(s_j)    (softmax; L is the row's logsumexp)
//   out_i = sum_j p_j v_j                            (Dv)
//
// Backward, from dout_i = dL/dout_i (Dv). Read the forward bottom-up:
//   out_i = sum_j p_j v_j      ->  dv_j += p_j dout_i          (dV = P^T dO)
//                                  dp_j  = dout_i . v_j        (dP = dO V^T)
//   p = softmax(s)             ->  dp_j/ds_l = p_j ([j = l] - p_l), so
//                                  ds_l  = sum_j dp_j p_j ([j = l] - p_l)
//                                        = p_l (dp_l - sum_j p_j dp_j)
//                                  and sum_j p_j dp_j = sum_j p_j (dout_i . v_j)
//                                                     = dout_i . (sum_j p_j v_j)
//                                                     = dout_i . out_i  =: delta_i
//                                  ds_l  = p_l (dp_l - delta_i)     (dS = P o (dP - delta))
//   s_j = scale q_i . k_j + m  ->  dq_i += scale * ds_j k_j     (dQ = scale dS K)
//                                  dk_j += scale * ds_j q_i     (dK = scale dS^T Q)
//                                  dm_ij = ds_j                 (then summed to m's shape)
// delta_i = dout_i . out_i costs Dv multiplications per row instead of Tk: that is why the
// output is saved (it costs no memory: it is the tensor the caller already holds).
//
// What is saved: q, k, v, out and L (one number per row), NOT the (B, H, Tq, Tk) matrix P.
// Backward recomputes each p_j = exp(s_j - L) from q, k and the mask — one more dot product
// per (i, j), the idea behind FlashAttention: at T = 2048 with 12 heads, P is 50 million
// numbers per sequence, L is 24 thousand.
//
// A row whose every key is masked has max_j s_j = -inf and a 0/0 softmax. It outputs zeros,
// L = -inf, and backward skips it: zero gradient to q_i and nothing to any k_j, v_j (PyTorch
// >= 2.5 does the same; older versions give NaN).
#include "ops/attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/broadcast.h"
#include "core/factories.h"
#include "core/parallel.h"
#include "ops/gemm.h"
#include "ops/reference_kernels.h"
#include "ops/vector_math.h"
#include "ops/vectorize.h"

namespace tg {
namespace {

/// The sizes of one call (see the shape legend).
struct Dims {
  int64_t B, H, Tq, Tk, D, Dv;
};

/// Which keys a query may see and what is added to its scores: a bool mask (true = may
/// attend) or a floating mask read through broadcast strides (0 along broadcast dims), and
/// the causal rule j <= i.
template <class F>
struct MaskView {
  const bool* keep = nullptr;
  const F* bias = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
  bool causal = false;

  int64_t at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return b * stride[0] + h * stride[1] + i * stride[2] + j * stride[3];
  }
};

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// s_ij = scale * q_i . k_j + m_ij, or -inf when key j is masked for query i.
template <class F>
F score(const F* qi, const F* kj, int64_t D, F scale, const MaskView<F>& m, int64_t b, int64_t h,
        int64_t i, int64_t j) {
  if (m.causal && j > i) return F(kNegInf);
  if (m.keep != nullptr && !m.keep[m.at(b, h, i, j)]) return F(kNegInf);
  F dot = 0;
  for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
  F s = scale * dot;
  if (m.bias != nullptr) s += m.bias[m.at(b, h, i, j)];
  return s;
}

// ---------------------------------------------------------------- raw kernels
// q, k, v, out, dout contiguous (B, H, T, D) in the compute type F; no allocation.

/// out (B, H, Tq, Dv) = softmax(s) v per row, lse (B, H, Tq) = log sum_j exp(s_j).
/// `s` is scratch for one row of Tk scores.
template <class F>
void attention_forward_kernel(const F* q, const F* k, const F* v, F* out, F* lse, F* s,
                              const Dims& n, F scale, const MaskView<F>& mask) {
  for (int64_t b = 0; b < n.B; ++b) {
    for (int64_t h = 0; h < n.H; ++h) {
      const int64_t bh = b * n.H + h;
      const F* kb = k + bh * n.Tk * n.D;
      const F* vb = v + bh * n.Tk * n.Dv;
      for (int64_t i = 0; i < n.Tq; ++i) {
        const int64_t row = bh * n.Tq + i;
        const F* qi = q + row * n.D;
        F* oi = out + row * n.Dv;
        F max = F(kNegInf);
        for (int64_t j = 0; j < n.Tk; ++j) {
          s[j] = score(qi, kb + j * n.D, n.D, scale, mask, b, h, i, j);
          max = std::max(max, s[j]);
        }
        for (int64_t c = 0; c < n.Dv; ++c) oi[c] = 0;
        if (max == F(kNegInf)) {  // every key masked: out_i = 0 (safe softmax)
          lse[row] = F(kNegInf);
          continue;
        }
        // Subtracting the max keeps every exp in (0, 1]: no overflow, and the largest is 1.
        F sum = 0;
        for (int64_t j = 0; j < n.Tk; ++j) {
          s[j] = std::exp(s[j] - max);  // exp(-inf) = 0 for masked keys
          sum += s[j];
        }
        for (int64_t j = 0; j < n.Tk; ++j) {
          if (s[j] == F(0)) continue;
          const F p = s[j] / sum;
          const F* vj = vb + j * n.Dv;
          for (int64_t c = 0; c < n.Dv; ++c) oi[c] += p * vj[c];
        }
        lse[row] = max + std::log(sum);
      }
    }
  }
}

/// dq += scale dS K, dk += scale dS^T Q, dv += P^T dO, dmask (B, H, Tq, Tk) += dS, with
/// p_j = exp(s_j - lse) recomputed and dS = P o (dP - delta), delta_i = dout_i . out_i.
/// Any of dq, dk, dv, dmask may be null (not needed).
template <class F>
void attention_backward_kernel(const F* dout, const F* q, const F* k, const F* v, const F* out,
                               const F* lse, F* dq, F* dk, F* dv, F* dmask, const Dims& n, F scale,
                               const MaskView<F>& mask) {
  // exercise attention.backward: begin
  for (int64_t b = 0; b < n.B; ++b) {
    for (int64_t h = 0; h < n.H; ++h) {
      const int64_t bh = b * n.H + h;
      for (int64_t i = 0; i < n.Tq; ++i) {
        const int64_t row = bh * n.Tq + i;
        if (lse[row] == F(kNegInf)) continue;  // fully masked row: zero gradient
        const F* qi = q + row * n.D;
        const F* gi = dout + row * n.Dv;
        const F* oi = out + row * n.Dv;
        F delta = 0;  // sum_j p_j dp_j = dout_i . out_i
        for (int64_t c = 0; c < n.Dv; ++c) delta += gi[c] * oi[c];
        for (int64_t j = 0; j < n.Tk; ++j) {
          const int64_t key = bh * n.Tk + j;
          const F* kj = k + key * n.D;
          const F* vj = v + key * n.Dv;
          const F s = score(qi, kj, n.D, scale, mask, b, h, i, j);
          if (s == F(kNegInf)) continue;  // p_j = 0: no gradient through a masked key
          const F p = std::exp(s - lse[row]);
          F dp = 0;  // dout_i . v_j
          for (int64_t c = 0; c < n.Dv; ++c) dp += gi[c] * vj[c];
          const F ds = p * (dp - delta);
          if (dv != nullptr) {
            F* dvj = dv + key * n.Dv;
            for (int64_t c = 0; c < n.Dv; ++c) dvj[c] += p * gi[c];
          }
          if (dq != nullptr) {
            F* dqi = dq + row * n.D;
            for (int64_t d = 0; d < n.D; ++d) dqi[d] += scale * ds * kj[d];
          }
          if (dk != nullptr) {
            F* dkj = dk + key * n.D;
            for (int64_t d = 0; d < n.D; ++d) dkj[d] += scale * ds * qi[d];
          }
          if (dmask != nullptr) dmask[row * n.Tk + j] += ds;
        }
      }
    }
  }
  // exercise attention.backward: end
}

// ---------------------------------------------------------------- fast kernels
// The same math, rearranged so that nearly all the work is matrix products on the blocked
// GEMM (ops/gemm.h). For one (b, h) slice and a block of query rows i0 <= i < i1:
//
//   forward:  S  = scale Q K^T              gemm NT   (rows x keys)
//             P  = softmax(S + mask) per row, L = logsumexp per row
//             O  = P V                      gemm NN
//   backward: S, P recomputed from Q, K and L (as the plain kernel does)
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
// Every operand is read in place through its strides (a (B, H, T, D) view of a (B, T, 3C)
// projection is fine): a slice's rows just need a contiguous last dim. (b, h) slices are
// independent, so threads split them; each slice runs on one thread in a fixed order, so the
// result does not depend on the thread count.

/// The rows of one operand's (b, h) slices, read or written in place: row t of slice (b, h)
/// starts at base + b * sb + h * sh + t * ld, and its last dim is contiguous. A null base
/// stands for a gradient nobody asked for.
template <class F>
struct Slices {
  F* base = nullptr;
  int64_t sb = 0, sh = 0, ld = 0;
  F* at(int64_t b, int64_t h) const { return base == nullptr ? nullptr : base + b * sb + h * sh; }
};

/// Everything the fast kernels read and write, as slices. lse (B, H, Tq) and dmask
/// (B, H, Tq, Tk) are contiguous; dmask may be null.
template <class F>
struct Operands {
  Slices<F> q, k, v, out, dout, dq, dk, dv;
  F* lse = nullptr;
  F* dmask = nullptr;
};

/// True when t's last dim is contiguous (or has one element): its slices can be read in place.
bool rows_contiguous(const Tensor& t) { return t.size(3) <= 1 || t.stride(3) == 1; }

template <class F>
Slices<F> slices_of(const Tensor& t) {
  if (!t.defined()) return {};
  return {t.data<F>(), t.stride(0), t.stride(1), t.stride(2)};
}

/// Query rows per block. Larger blocks pack each K and V panel fewer times, smaller ones skip
/// more of the causal triangle; at T = 128, 32, 64 and 128 rows ran within noise of each other.
constexpr int64_t kBlockRows = 64;

/// The first key no query row before i1 may see: i1 under the causal rule (j <= i), else Tk.
int64_t key_end(const Dims& n, bool causal, int64_t i1) {
  return causal ? std::min(n.Tk, i1) : n.Tk;
}

// The row loops below run in chunks of kLanes elements, each chunk an inner loop of fixed
// length, then a scalar tail: GCC at -O2 (its "very cheap" vectoriser) only vectorises a
// loop whose trip count is visibly a whole number of vectors (ops/vectorize.h). A sum kept
// in kLanes partial sums (added up in a fixed order at the end) vectorises too. The row max
// is ops/vector_math.h's detail::row_max: a max gives the same result in any order.
constexpr int64_t kLanes = 16;

/// e^x: the vectorisable version for float, libm's for double (only the tests use double).
/// Always inlined: a call per element would keep exp_shifted's loop scalar.
template <class F>
[[gnu::always_inline]] inline F exp_of(F x) {
  if constexpr (std::is_same_v<F, float>) {
    return detail::fast_exp(x);  // ops/vector_math.h: plain arithmetic, so loops vectorise
  } else {
    return std::exp(x);
  }
}

/// x_j = e^(x_j - shift) for j < len; returns sum_j x_j.
template <class F>
F exp_shifted(F* x, int64_t len, F shift) {
  F acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= len; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      x[j + l] = exp_of(x[j + l] - shift);
      acc[l] += x[j + l];
    }
  }
  F sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += acc[l];
  for (; j < len; ++j) {
    x[j] = exp_of(x[j] - shift);
    sum += x[j];
  }
  return sum;
}

/// x_j /= d for j < len.
template <class F>
void divide_row(F* x, int64_t len, F d) {
  detail::simd_for(len, [&](int64_t j) { x[j] /= d; });
}

/// sum_c a_c b_c over c < len.
template <class F>
F dot_row(const F* a, const F* b, int64_t len) {
  F acc[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= len; c += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) acc[l] += a[c + l] * b[c + l];
  }
  F sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += acc[l];
  for (; c < len; ++c) sum += a[c] * b[c];
  return sum;
}

/// ds_j = p_j (dp_j - delta) for j < len, in place over dp.
template <class F>
void softmax_backward_row(F* dp, const F* p, int64_t len, F delta) {
  detail::simd_for(len, [&](int64_t j) { dp[j] = p[j] * (dp[j] - delta); });
}

/// Applies the mask to one row of scores s_j = scale q_i . k_j (j < len): -inf where key j
/// is masked for query i, + m_ij where the mask is a float bias.
template <class F>
void mask_row(F* s, int64_t len, const MaskView<F>& m, int64_t b, int64_t h, int64_t i) {
  if (m.causal) {
    for (int64_t j = i + 1; j < len; ++j) s[j] = F(kNegInf);
  } else if (m.keep != nullptr) {
    for (int64_t j = 0; j < len; ++j) {
      if (!m.keep[m.at(b, h, i, j)]) s[j] = F(kNegInf);
    }
  } else if (m.bias != nullptr) {
    for (int64_t j = 0; j < len; ++j) s[j] += m.bias[m.at(b, h, i, j)];
  }
}

/// One (b, h) slice forward: out and lse as attention_forward_kernel, through the GEMM.
/// `s` is scratch for kBlockRows x Tk scores.
template <class F>
void attention_forward_slice(const Operands<F>& x, F* s, const Dims& n, F scale,
                             const MaskView<F>& mask, int64_t b, int64_t h) {
  const F *q = x.q.at(b, h), *k = x.k.at(b, h), *v = x.v.at(b, h);
  F* out = x.out.at(b, h);
  F* lse = x.lse + (b * n.H + h) * n.Tq;
  for (int64_t i0 = 0; i0 < n.Tq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, n.Tq - i0);
    const int64_t keys = key_end(n, mask.causal, i0 + rows);
    // S = scale Q K^T for this block (rows x keys, row stride `keys`)
    gemm(false, true, rows, keys, n.D, scale, q + i0 * x.q.ld, x.q.ld, k, x.k.ld, F(0), s, keys);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      F* si = s + r * keys;
      mask_row(si, keys, mask, b, h, i);
      const F max = detail::row_max(si, keys);
      if (max == F(kNegInf)) {  // every key masked: p = 0, out_i = 0, L = -inf
        std::fill(si, si + keys, F(0));
        lse[i] = F(kNegInf);
        continue;
      }
      const F sum = exp_shifted(si, keys, max);
      divide_row(si, keys, sum);
      lse[i] = max + std::log(sum);
    }
    // O = P V (when keys == 0 the GEMM writes zeros)
    gemm(false, false, rows, n.Dv, keys, F(1), s, keys, v, x.v.ld, F(0), out + i0 * x.out.ld,
         x.out.ld);
  }
}

/// One (b, h) slice backward: dq, dk, dv, dmask as attention_backward_kernel, through the
/// GEMM. dk and dv (if wanted) are zeroed here first: every query block adds into them.
/// `p` and `dp` are scratch for kBlockRows x Tk numbers each.
template <class F>
void attention_backward_slice(const Operands<F>& x, F* p, F* dp, const Dims& n, F scale,
                              const MaskView<F>& mask, int64_t b, int64_t h) {
  const F *q = x.q.at(b, h), *k = x.k.at(b, h), *v = x.v.at(b, h);
  const F *o = x.out.at(b, h), *g = x.dout.at(b, h);
  F *dq = x.dq.at(b, h), *dk = x.dk.at(b, h), *dv = x.dv.at(b, h);
  const int64_t bh = b * n.H + h;
  const F* lse = x.lse + bh * n.Tq;
  F* dmask = x.dmask == nullptr ? nullptr : x.dmask + bh * n.Tq * n.Tk;
  for (int64_t j = 0; j < n.Tk; ++j) {
    if (dk != nullptr) std::fill(dk + j * x.dk.ld, dk + j * x.dk.ld + n.D, F(0));
    if (dv != nullptr) std::fill(dv + j * x.dv.ld, dv + j * x.dv.ld + n.Dv, F(0));
  }
  for (int64_t i0 = 0; i0 < n.Tq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, n.Tq - i0);
    const int64_t keys = key_end(n, mask.causal, i0 + rows);
    const F* gb = g + i0 * x.dout.ld;
    const F* qb = q + i0 * x.q.ld;
    // P = exp(scale Q K^T + mask - L), recomputed; dP = dO V^T
    gemm(false, true, rows, keys, n.D, scale, qb, x.q.ld, k, x.k.ld, F(0), p, keys);
    gemm(false, true, rows, keys, n.Dv, F(1), gb, x.dout.ld, v, x.v.ld, F(0), dp, keys);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      F* pi = p + r * keys;
      F* dsi = dp + r * keys;      // dP becomes dS in place
      if (lse[i] == F(kNegInf)) {  // fully masked row: p = 0, so ds = 0
        std::fill(pi, pi + keys, F(0));
        std::fill(dsi, dsi + keys, F(0));
        continue;
      }
      mask_row(pi, keys, mask, b, h, i);
      exp_shifted(pi, keys, lse[i]);
      const F* gi = gb + r * x.dout.ld;
      const F* oi = o + i * x.out.ld;
      const F delta = dot_row(gi, oi, n.Dv);  // dout_i . out_i
      softmax_backward_row(dsi, pi, keys, delta);
      if (dmask != nullptr) std::copy(dsi, dsi + keys, dmask + i * n.Tk);
    }
    if (dv != nullptr) {  // dV += P^T dO
      gemm(true, false, keys, n.Dv, rows, F(1), p, keys, gb, x.dout.ld, F(1), dv, x.dv.ld);
    }
    if (dq != nullptr) {  // dQ = scale dS K
      gemm(false, false, rows, n.D, keys, scale, dp, keys, k, x.k.ld, F(0), dq + i0 * x.dq.ld,
           x.dq.ld);
    }
    if (dk != nullptr) {  // dK += scale dS^T Q
      gemm(true, false, keys, n.D, rows, scale, dp, keys, qb, x.q.ld, F(1), dk, x.dk.ld);
    }
  }
}

/// Slices worth about 10 microseconds of work per thread, at least one.
int64_t slice_grain(const Dims& n) {
  const int64_t flops_per_slice = 2 * n.Tq * n.Tk * (n.D + n.Dv) + 1;
  return std::max<int64_t>(1, 200000 / flops_per_slice);
}

/// The fast forward over all slices; threads take whole (b, h) slices.
template <class F>
void attention_forward_fast(const Operands<F>& x, const Dims& n, F scale, const MaskView<F>& mask) {
  parallel_for(n.B * n.H, slice_grain(n), [&](int64_t begin, int64_t end) {
    std::vector<F> s(static_cast<size_t>(std::min(kBlockRows, n.Tq) * n.Tk));
    for (int64_t bh = begin; bh < end; ++bh) {
      attention_forward_slice(x, s.data(), n, scale, mask, bh / n.H, bh % n.H);
    }
  });
}

/// The fast backward over all slices; threads take whole (b, h) slices, so every dk_j and
/// dv_j sum runs on one thread in one order.
template <class F>
void attention_backward_fast(const Operands<F>& x, const Dims& n, F scale,
                             const MaskView<F>& mask) {
  parallel_for(n.B * n.H, slice_grain(n), [&](int64_t begin, int64_t end) {
    const auto block = static_cast<size_t>(std::min(kBlockRows, n.Tq) * n.Tk);
    std::vector<F> p(block), dp(block);
    for (int64_t bh = begin; bh < end; ++bh) {
      attention_backward_slice(x, p.data(), dp.data(), n, scale, mask, bh / n.H, bh % n.H);
    }
  });
}

// ---------------------------------------------------------------- helpers
constexpr const char* kOp = "scaled_dot_product_attention";

/// True when `mask` broadcasts to (B, H, Tq, Tk) without being enlarged itself.
bool broadcasts_to(const Shape& mask, const Shape& full) {
  if (mask.size() > full.size()) return false;
  const size_t lead = full.size() - mask.size();
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d] != 1 && mask[d] != full[lead + d]) return false;
  }
  return true;
}

void check_args(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal,
                double scale) {
  TG_CHECK(q.dtype() == kFloat32 || q.dtype() == kFloat64, DTypeError,
           "{}: q {} is {}; attention supports float32 and float64", kOp, q.shape(), q.dtype());
  TG_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), DTypeError,
           "{}: q, k, v must share a dtype, got q {}, k {}, v {}", kOp, q.dtype(), k.dtype(),
           v.dtype());
  TG_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, ShapeError,
           "{}: q, k, v must be 4-D (B, H, T, D), got q {}, k {}, v {}", kOp, q.shape(), k.shape(),
           v.shape());
  TG_CHECK(k.size(0) == q.size(0) && k.size(1) == q.size(1) && v.size(0) == q.size(0) &&
               v.size(1) == q.size(1),
           ShapeError, "{}: q {}, k {}, v {} disagree on batch and heads (B, H)", kOp, q.shape(),
           k.shape(), v.shape());
  TG_CHECK(k.size(3) == q.size(3), ShapeError,
           "{}: q {} and k {} disagree on the head dim D ({} vs {})", kOp, q.shape(), k.shape(),
           q.size(3), k.size(3));
  TG_CHECK(v.size(2) == k.size(2), ShapeError,
           "{}: k {} and v {} disagree on the number of keys Tk ({} vs {})", kOp, k.shape(),
           v.shape(), k.size(2), v.size(2));
  TG_CHECK(std::isfinite(scale) && scale > 0, ValueError,
           "{}: scale must be finite and > 0, got {} (q {})", kOp, scale, q.shape());
  if (!mask.defined()) return;
  TG_CHECK(!causal, ValueError,
           "{}: give either mask {} or causal=true, not both (fold the causal rule into the mask)",
           kOp, mask.shape());
  TG_CHECK(mask.dtype() == kBool || mask.dtype() == q.dtype(), DTypeError,
           "{}: mask {} is {}; it must be bool or q's dtype {}", kOp, mask.shape(), mask.dtype(),
           q.dtype());
  const Shape full{q.size(0), q.size(1), q.size(2), k.size(2)};
  TG_CHECK(broadcasts_to(mask.shape(), full), ShapeError,
           "{}: mask {} does not broadcast to (B, H, Tq, Tk) = {}", kOp, mask.shape(), full);
}

/// The mask (if any) read through strides that broadcast it to (B, H, Tq, Tk).
template <class F>
MaskView<F> mask_view(const Tensor& mask, bool causal) {
  MaskView<F> m;
  m.causal = causal;
  if (!mask.defined()) return m;
  const size_t lead = 4 - mask.dim();
  for (size_t d = 0; d < mask.dim(); ++d) {
    const auto di = static_cast<int64_t>(d);
    m.stride[lead + d] = mask.size(di) == 1 ? 0 : mask.stride(di);
  }
  if (mask.dtype() == kBool) m.keep = static_cast<const bool*>(mask.raw_data());
  else m.bias = static_cast<const F*>(mask.raw_data());
  return m;
}

Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v) {
  return {q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3)};
}

/// t itself when the fast kernels can read it in place (see Slices), else a contiguous copy.
Tensor readable(const Tensor& t) { return rows_contiguous(t) ? t : t.contiguous(); }

/// A new (B, H, T, X) tensor laid out like `like`, as torch.empty_like keeps strides: when
/// like's heads sit inside time in memory (the (B, T, H, D) activations a model splits into
/// heads with a transpose), the result is a (B, T, H, X) tensor transposed to (B, H, T, X),
/// so the caller's transpose back to (B, T, H, X) and reshape to (B, T, H * X) copy nothing.
Tensor empty_heads_like(const Tensor& like, int64_t T, int64_t X) {
  const int64_t B = like.size(0), H = like.size(1);
  const bool heads_inside = H > 1 && like.size(2) > 1 && like.stride(1) < like.stride(2);
  if (heads_inside) return empty({B, T, H, X}, like.dtype()).transpose(1, 2);
  return empty({B, H, T, X}, like.dtype());
}

// ---------------------------------------------------------------- Function
struct Attention : Function<Attention> {
  static constexpr std::string_view kName = "scaled_dot_product_attention";
  struct State {
    double scale = 1;
    bool causal = false;
    bool has_mask = false;
  };

  // forward: out_i = sum_j softmax_j(scale * q_i . k_j + m_ij) v_j, per (b, h, i)
  static Tensor forward(Context<State>& ctx, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& mask, bool causal, std::optional<double> scale_opt) {
    TG_CHECK(q.dim() == 4, ShapeError, "{}: q must be 4-D (B, H, Tq, D), got shape {}", kOp,
             q.shape());
    const double scale = scale_opt.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3))));
    check_args(q, k, v, mask, causal, scale);
    const Dims n = dims_of(q, k, v);
    Tensor lse = empty({n.B, n.H, n.Tq}, q.dtype());
    Tensor out;
    if (!reference_kernels()) {
      const Tensor qr = readable(q), kr = readable(k), vr = readable(v);
      out = empty_heads_like(q, n.Tq, n.Dv);
      visit_dtype(q.dtype(), [&]<class F>() {
        if constexpr (std::is_floating_point_v<F>) {
          Operands<F> x;
          x.q = slices_of<F>(qr), x.k = slices_of<F>(kr), x.v = slices_of<F>(vr);
          x.out = slices_of<F>(out), x.lse = lse.data<F>();
          attention_forward_fast(x, n, static_cast<F>(scale), mask_view<F>(mask, causal));
        }
      });
    } else {
      const Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
      out = empty({n.B, n.H, n.Tq, n.Dv}, q.dtype());
      Tensor scratch = empty({n.Tk}, q.dtype());
      visit_dtype(q.dtype(), [&]<class F>() {
        if constexpr (std::is_floating_point_v<F>) {
          attention_forward_kernel(qc.data<F>(), kc.data<F>(), vc.data<F>(), out.data<F>(),
                                   lse.data<F>(), scratch.data<F>(), n, static_cast<F>(scale),
                                   mask_view<F>(mask, causal));
        }
      });
    }
    // L (one number per row) instead of P (Tk numbers per row); out is the returned tensor.
    ctx.save_for_backward(q, k, v, out, lse);
    if (mask.defined()) ctx.save_for_backward(mask);
    ctx.state = {scale, causal, mask.defined()};
    return out;
  }

  // forward was: s_j = scale * q_i . k_j + m_ij; p = softmax(s); out_i = sum_j p_j v_j
  // so:          dv_j += p_j dout_i;  ds_j = p_j (dout_i . v_j - dout_i . out_i)
  //              dq_i += scale * ds_j k_j;  dk_j += scale * ds_j q_i;  dm_ij = ds_j
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &lse = saved[4];
    const Tensor mask = ctx.state.has_mask ? saved[5] : Tensor();
    const Dims n = dims_of(q, k, v);
    const DType dt = q.dtype();
    const bool need_mask = ctx.needs_input_grad(3);
    // dS has the full (B, H, Tq, Tk) shape; it is only built when the mask needs a gradient.
    Tensor ds = need_mask ? zeros({n.B, n.H, n.Tq, n.Tk}, dt) : Tensor();
    if (!reference_kernels()) {
      // dq, dk, dv laid out like q, k, v; the kernel writes every element (no zero fill).
      Tensor dq = ctx.needs_input_grad(0) ? empty_heads_like(q, n.Tq, n.D) : Tensor();
      Tensor dk = ctx.needs_input_grad(1) ? empty_heads_like(k, n.Tk, n.D) : Tensor();
      Tensor dv = ctx.needs_input_grad(2) ? empty_heads_like(v, n.Tk, n.Dv) : Tensor();
      const Tensor qr = readable(q), kr = readable(k), vr = readable(v);
      const Tensor outr = readable(out), gr = readable(g[0]);
      visit_dtype(dt, [&]<class F>() {
        if constexpr (std::is_floating_point_v<F>) {
          Operands<F> x;
          x.q = slices_of<F>(qr), x.k = slices_of<F>(kr), x.v = slices_of<F>(vr);
          x.out = slices_of<F>(outr), x.dout = slices_of<F>(gr);
          x.dq = slices_of<F>(dq), x.dk = slices_of<F>(dk), x.dv = slices_of<F>(dv);
          x.lse = lse.data<F>(), x.dmask = ds.defined() ? ds.data<F>() : nullptr;
          attention_backward_fast(x, n, static_cast<F>(ctx.state.scale),
                                  mask_view<F>(mask, ctx.state.causal));
        }
      });
      return {dq, dk, dv, need_mask ? sum_to(ds, mask.shape()) : Tensor()};
    }
    const Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    const Tensor gc = g[0].contiguous();
    Tensor dq = ctx.needs_input_grad(0) ? zeros(q.shape(), dt) : Tensor();
    Tensor dk = ctx.needs_input_grad(1) ? zeros(k.shape(), dt) : Tensor();
    Tensor dv = ctx.needs_input_grad(2) ? zeros(v.shape(), dt) : Tensor();
    visit_dtype(dt, [&]<class F>() {
      if constexpr (std::is_floating_point_v<F>) {
        auto ptr = [](Tensor& t) { return t.defined() ? t.data<F>() : nullptr; };
        attention_backward_kernel(gc.data<F>(), qc.data<F>(), kc.data<F>(), vc.data<F>(),
                                  out.data<F>(), lse.data<F>(), ptr(dq), ptr(dk), ptr(dv), ptr(ds),
                                  n, static_cast<F>(ctx.state.scale),
                                  mask_view<F>(mask, ctx.state.causal));
      }
    });
    // The mask was read broadcast: each of its elements served every copy, so its gradient
    // sums dS over the broadcast dims.
    return {dq, dk, dv, need_mask ? sum_to(ds, mask.shape()) : Tensor()};
  }
};

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask, bool causal, std::optional<double> scale,
                                    Here here) {
  return Attention::apply_at(here, q, k, v, mask, causal, scale);
}

}  // namespace tg
