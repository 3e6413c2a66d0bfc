// ops/attention.cpp — scaled dot-product attention: the reference kernels forward and
// backward, then the Function.
// Tests: tests/ops/attention_test.cpp. Course: docs/course/12-attention.md.
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
// output is saved. It is the tensor the forward returns, so saving it keeps alive what the
// caller holds anyway, as long as the caller holds it.
//
// What is saved: q, k, v, out and L (one number per row), NOT the (B, H, Tq, Tk) matrix P.
// Backward recomputes each p_j = exp(s_j - L) from q, k and the mask — one more dot product
// per (i, j), the idea behind FlashAttention: at T = 2048 with 12 heads, P is 50 million
// numbers per sequence, L is 24 thousand.
//
// A row whose every key is masked has max_j s_j = -inf and a 0/0 softmax. It outputs zeros,
// L = -inf, and backward skips it: zero gradient to q_i and nothing to any k_j, v_j (PyTorch
// >= 2.5 does the same; older versions give NaN).
//
// The fast kernels (ops/fast/attention.cpp) do nearly all of this as matrix products on the
// blocked GEMM, a block of query rows at a time.
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/broadcast.h"
#include "core/factories.h"
#include "ops/compute.h"

namespace tg {
namespace {

using kernels::AttentionDims;
using kernels::AttentionMask;
using kernels::HeadRows;

using kernels::kNegInf;

/// s_ij = scale * q_i . k_j + m_ij, or -inf when key j is masked for query i
/// (kernels::attention_score, which the tiled kernels of ops/attention_tiled.cpp share).
template <class F>
F score(const F* qi, const F* kj, int64_t D, F scale, const AttentionMask<F>& m, int64_t b,
        int64_t h, int64_t i, int64_t j) {
  // exercise attention.forward: begin
  if (m.causal && j > i) return F(kNegInf);
  if (m.keep != nullptr && !m.keep[m.at(b, h, i, j)]) return F(kNegInf);
  F dot = 0;
  for (int64_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
  F s = scale * dot;
  if (m.bias != nullptr) s += m.bias[m.at(b, h, i, j)];
  return s;
  // exercise attention.forward: end
}

// ---------------------------------------------------------------- reference kernels
/// One query row: out_i = sum_j p_j v_j with p = softmax(s), and the row's logsumexp L as the
/// return value. The max score first, then the exp-weighted sum of the value rows and its
/// normaliser in one more pass over the keys (the scores are computed twice, instead of
/// being kept in a buffer of Tk).
template <class F>
F attention_row(const F* qi, HeadRows<const F> k, HeadRows<const F> v, F* oi,
                const AttentionDims& n, F scale, const AttentionMask<F>& mask, int64_t b, int64_t h,
                int64_t i) {
  // exercise attention.forward: begin
  F max = F(kNegInf);
  for (int64_t j = 0; j < n.Tk; ++j) {
    max = std::max(max, score(qi, k.row(b, h, j), n.D, scale, mask, b, h, i, j));
  }
  for (int64_t c = 0; c < n.Dv; ++c) oi[c] = 0;
  if (max == F(kNegInf)) return F(kNegInf);  // every key masked: out_i = 0 (safe softmax)
  // Subtracting the max keeps every exp in (0, 1]: no overflow, and the largest is 1.
  F sum = 0;
  for (int64_t j = 0; j < n.Tk; ++j) {
    const F s = score(qi, k.row(b, h, j), n.D, scale, mask, b, h, i, j);
    if (s == F(kNegInf)) continue;  // a masked key: exp(-inf) = 0
    const F e = std::exp(s - max);
    sum += e;
    const F* vj = v.row(b, h, j);
    for (int64_t c = 0; c < n.Dv; ++c) oi[c] += e * vj[c];
  }
  for (int64_t c = 0; c < n.Dv; ++c) oi[c] /= sum;  // p_j = e_j / sum
  return max + std::log(sum);
  // exercise attention.forward: end
}

/// Every (b, h, i) row on its own; lse receives each row's L for backward.
template <class F>
void attention_forward(HeadRows<const F> q, HeadRows<const F> k, HeadRows<const F> v,
                       HeadRows<F> out, F* lse, const AttentionDims& n, F scale,
                       const AttentionMask<F>& mask) {
  for (int64_t b = 0; b < n.B; ++b) {
    for (int64_t h = 0; h < n.H; ++h) {
      for (int64_t i = 0; i < n.Tq; ++i) {
        const int64_t row = (b * n.H + h) * n.Tq + i;
        lse[row] = attention_row(q.row(b, h, i), k, v, out.row(b, h, i), n, scale, mask, b, h, i);
      }
    }
  }
}

/// The weighted sum's backward for query row i of (b, h), from its upstream gradient gi and
/// its recomputed probabilities p (Tk): dv_j += p_j gi for every key (when dv is wanted), and
/// dp_j = gi . v_j into dp (Tk), which the scores' backward needs.
template <class F>
void values_backward(const F* gi, HeadRows<const F> v, HeadRows<F> dv, const F* p, F* dp,
                     const AttentionDims& n, int64_t b, int64_t h) {
  // exercise attention.backward_values: begin
  for (int64_t j = 0; j < n.Tk; ++j) {
    dp[j] = 0;
    if (p[j] == F(0)) continue;  // a masked key: no weight, so no gradient either way
    const F* vj = v.row(b, h, j);
    for (int64_t c = 0; c < n.Dv; ++c) dp[j] += gi[c] * vj[c];
    if (dv) {
      F* dvj = dv.row(b, h, j);
      for (int64_t c = 0; c < n.Dv; ++c) dvj[c] += p[j] * gi[c];
    }
  }
  // exercise attention.backward_values: end
}

/// The softmax's and the scores' backward for query row i of (b, h): ds_j from p, dp and
/// delta_i = gi . oi, then dq_i (into dqi, may be null), dk_j (when dk is wanted) and the
/// mask's gradient (into dmask_row, Tk, may be null).
template <class F>
void scores_backward(const F* qi, const F* gi, const F* oi, HeadRows<const F> k, const F* p,
                     const F* dp, F* dqi, HeadRows<F> dk, F* dmask_row, const AttentionDims& n,
                     F scale, int64_t b, int64_t h) {
  // exercise attention.backward_scores: begin
  F delta = 0;  // sum_j p_j dp_j = dout_i . out_i
  for (int64_t c = 0; c < n.Dv; ++c) delta += gi[c] * oi[c];
  for (int64_t j = 0; j < n.Tk; ++j) {
    if (p[j] == F(0)) continue;  // a masked key
    const F ds = p[j] * (dp[j] - delta);
    const F* kj = k.row(b, h, j);
    if (dqi != nullptr) {
      for (int64_t d = 0; d < n.D; ++d) dqi[d] += scale * ds * kj[d];
    }
    if (dk) {
      F* dkj = dk.row(b, h, j);
      for (int64_t d = 0; d < n.D; ++d) dkj[d] += scale * ds * qi[d];
    }
    if (dmask_row != nullptr) dmask_row[j] += ds;
  }
  // exercise attention.backward_scores: end
}

/// dq, dk, dv and dmask as derived at the top, a query row at a time: its row of P is
/// recomputed from q, k, the mask and the saved L (p_j = exp(s_j - L)), then the weighted
/// sum's backward gives dv and dP's row, and, when q, k or the mask want a gradient, the
/// softmax's and the scores' backward give the rest. Only one row of P and of dP (Tk
/// numbers each) exists at any time.
template <class F>
void attention_backward(HeadRows<const F> dout, HeadRows<const F> q, HeadRows<const F> k,
                        HeadRows<const F> v, HeadRows<const F> out, const F* lse, HeadRows<F> dq,
                        HeadRows<F> dk, HeadRows<F> dv, F* dmask, const AttentionDims& n, F scale,
                        const AttentionMask<F>& mask) {
  kernels::zero_rows_unless_adding(dq, n.B, n.H, n.Tq, n.D);
  kernels::zero_rows_unless_adding(dk, n.B, n.H, n.Tk, n.D);
  kernels::zero_rows_unless_adding(dv, n.B, n.H, n.Tk, n.Dv);
  if (dmask != nullptr) std::fill(dmask, dmask + n.B * n.H * n.Tq * n.Tk, F(0));
  std::vector<F> p(static_cast<size_t>(n.Tk)), dp(static_cast<size_t>(n.Tk));
  for (int64_t b = 0; b < n.B; ++b) {
    for (int64_t h = 0; h < n.H; ++h) {
      for (int64_t i = 0; i < n.Tq; ++i) {
        const int64_t row = (b * n.H + h) * n.Tq + i;
        if (lse[row] == F(kNegInf)) continue;  // fully masked row: zero gradient
        const F* qi = q.row(b, h, i);
        for (int64_t j = 0; j < n.Tk; ++j) {
          const F s_ij = score(qi, k.row(b, h, j), n.D, scale, mask, b, h, i, j);
          p[static_cast<size_t>(j)] = s_ij == F(kNegInf) ? F(0) : std::exp(s_ij - lse[row]);
        }
        values_backward(dout.row(b, h, i), v, dv, p.data(), dp.data(), n, b, h);
        if (dq || dk || dmask != nullptr) {
          scores_backward(qi, dout.row(b, h, i), out.row(b, h, i), k, p.data(), dp.data(),
                          dq ? dq.row(b, h, i) : nullptr, dk,
                          dmask != nullptr ? dmask + row * n.Tk : nullptr, n, scale, b, h);
        }
      }
    }
  }
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
                double scale, bool enable_gqa) {
  TG_CHECK(is_floating_point(q.dtype()), DTypeError,
           "{}: q {} is {}; attention needs a floating dtype", kOp, q.shape(), q.dtype());
  TG_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), DTypeError,
           "{}: q, k, v must share a dtype, got q {}, k {}, v {}", kOp, q.dtype(), k.dtype(),
           v.dtype());
  TG_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, ShapeError,
           "{}: q, k, v must be 4-D (B, H, T, D), got q {}, k {}, v {}", kOp, q.shape(), k.shape(),
           v.shape());
  TG_CHECK(k.size(0) == q.size(0) && v.size(0) == q.size(0) && v.size(1) == k.size(1) &&
               (enable_gqa || k.size(1) == q.size(1)),
           ShapeError, "{}: q {}, k {}, v {} disagree on batch and heads (B, H){}", kOp, q.shape(),
           k.shape(), v.shape(),
           enable_gqa || k.size(1) == q.size(1) ? "" : " (fewer kv heads need enable_gqa)");
  TG_CHECK(!enable_gqa || (k.size(1) >= 1 && q.size(1) % k.size(1) == 0), ShapeError,
           "{}: grouped-query attention needs the kv heads of k {} to divide the query heads of "
           "q {} ({} by {})",
           kOp, k.shape(), q.shape(), q.size(1), k.size(1));
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
AttentionMask<F> mask_view(const Tensor& mask, bool causal) {
  AttentionMask<F> m;
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

AttentionDims dims_of(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t group = k.size(1) > 0 ? q.size(1) / k.size(1) : 1;
  return {q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), v.size(3), group};
}

/// True when t's last dim is contiguous (or has one element): the kernels can read its rows
/// in place (kernels::HeadRows).
bool rows_contiguous(const Tensor& t) { return t.size(3) <= 1 || t.stride(3) == 1; }

/// t itself when the kernels can read it in place, else a contiguous copy.
Tensor readable(const Tensor& t) { return rows_contiguous(t) ? t : t.contiguous(); }

/// The kernels' view of a (B, H, T, X) tensor (undefined: a null one).
/// `group` > 1 for k, v and their gradients under grouped-query attention (HeadRows::group).
template <class F>
HeadRows<F> rows_of(const Tensor& t, bool add = false, int64_t group = 1) {
  if (!t.defined()) return {};
  return {static_cast<F*>(t.raw_data()), t.stride(0), t.stride(1), t.stride(2), add, group};
}

/// A new (B, H, T, X) tensor laid out like `like`, as torch.empty_like keeps strides: when
/// like's heads sit inside time in memory (the (B, T, H, D) activations a model splits into
/// heads with a transpose), the result is a (B, T, H, X) tensor transposed to (B, H, T, X),
/// so the caller's transpose back to (B, T, H, X) and reshape to (B, T, H * X) copy nothing.
Tensor empty_heads_like(const Tensor& like, int64_t T, int64_t X, DType dtype) {
  const int64_t B = like.size(0), H = like.size(1);
  const bool heads_inside = H > 1 && like.size(2) > 1 && like.stride(1) < like.stride(2);
  if (heads_inside) return empty({B, T, H, X}, dtype).transpose(1, 2);
  return empty({B, H, T, X}, dtype);
}
Tensor empty_heads_like(const Tensor& like, int64_t T, int64_t X) {
  return empty_heads_like(like, T, X, like.dtype());
}

/// What the kernels read: t in place when they can, else a contiguous copy; float16 and
/// bfloat16 widened to float32 (the kernels compute in float32 and the result is rounded
/// once, as every op does: ops/compute.h).
Tensor kernel_input(const Tensor& t, DType ct) {
  return t.defined() && t.dtype() != ct ? detail::as_compute(t, ct) : readable(t);
}

/// A float mask in the compute type (it is read through strides: no copy otherwise).
Tensor float_mask(const Tensor& mask, DType ct) {
  return mask.defined() && mask.dtype() != kBool && mask.dtype() != ct
             ? detail::as_compute(mask, ct)
             : mask;
}

// ---------------------------------------------------------------- Function
struct Attention : Function<Attention> {
  static constexpr std::string_view kName = "scaled_dot_product_attention";
  static constexpr AutocastRule kAutocast = AutocastRule::kLowPrecision;  // core/autocast.h
  struct State {
    double scale = 1;
    bool causal = false;
    bool has_mask = false;
    AttentionAlgorithm algorithm;  // the kernel the forward ran: backward runs its twin
  };

  // forward: out_i = sum_j softmax_j(scale * q_i . k_j + m_ij) v_j, per (b, h, i)
  static Tensor forward(Context<State>& ctx, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& mask, bool causal, std::optional<double> scale_opt,
                        bool enable_gqa) {
    TG_CHECK(q.dim() == 4, ShapeError, "{}: q must be 4-D (B, H, Tq, D), got shape {}", kOp,
             q.shape());
    const double scale = scale_opt.value_or(1.0 / std::sqrt(static_cast<double>(q.size(3))));
    check_args(q, k, v, mask, causal, scale, enable_gqa);
    const AttentionDims n = dims_of(q, k, v);
    const DType ct = detail::compute_type(q.dtype());
    const Tensor maskr = float_mask(mask, ct);
    Tensor out = empty_heads_like(q, n.Tq, n.Dv, ct);
    Tensor lse = empty({n.B, n.H, n.Tq}, ct);
    const AttentionAlgorithm algorithm = attention_algorithm();
    const bool tiled = algorithm.kernel == AttentionKernel::kTiled;
    const kernels::AttentionTiles tiles{algorithm.tile_q, algorithm.tile_k};
    if (auto* bf16 = kernels::attention_forward_bf16.get();
        bf16 && !tiled && q.dtype() == kBFloat16) {
      // The fast path's bfloat16 kernel reads q, k and v as they are (see ops/attention.h).
      bf16(rows_of<const BFloat16>(readable(q)),
           rows_of<const BFloat16>(readable(k), false, n.group),
           rows_of<const BFloat16>(readable(v), false, n.group), rows_of<float>(out),
           lse.data<float>(), n, static_cast<float>(scale), mask_view<float>(maskr, causal));
    } else {
      const Tensor qr = kernel_input(q, ct), kr = kernel_input(k, ct), vr = kernel_input(v, ct);
      detail::visit_compute(ct, [&]<class F>() {
        // Both kernels take the same arguments; the tiled one, its tile sizes too.
        auto run = [&](auto* kernel, auto... tiles_if_tiled) {
          kernel(rows_of<const F>(qr), rows_of<const F>(kr, false, n.group),
                 rows_of<const F>(vr, false, n.group), rows_of<F>(out), lse.data<F>(), n,
                 static_cast<F>(scale), mask_view<F>(maskr, causal), tiles_if_tiled...);
        };
        if (tiled) run(kernels::attention_tiled_forward.get<F>(), tiles);
        else run(kernels::attention_forward.get<F>());
      });
    }
    if (ct != q.dtype()) out = empty_heads_like(q, n.Tq, n.Dv).copy_(out);  // rounded once
    // L (one number per row, float32 for the half types) instead of P (Tk numbers per row);
    // out is the returned tensor.
    ctx.save_for_backward(q, k, v, out, lse);
    if (mask.defined()) ctx.save_for_backward(mask);
    ctx.state = {scale, causal, mask.defined(), algorithm};
    return out;
  }

  // backward: the derivation at the top of the file
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &lse = saved[4];
    const Tensor mask = ctx.state.has_mask ? saved[5] : Tensor();
    const AttentionDims n = dims_of(q, k, v);
    const DType ct = detail::compute_type(q.dtype());
    // dq, dk, dv laid out like q, k, v (see empty_heads_like), or an existing .grad.
    const GradBuffer dq =
        ctx.grad_buffer(0, q.shape(), ct, [&] { return empty_heads_like(q, n.Tq, n.D, ct); });
    const GradBuffer dk =
        ctx.grad_buffer(1, k.shape(), ct, [&] { return empty_heads_like(k, n.Tk, n.D, ct); });
    const GradBuffer dv =
        ctx.grad_buffer(2, v.shape(), ct, [&] { return empty_heads_like(v, n.Tk, n.Dv, ct); });
    // dS has the full (B, H, Tq, Tk) shape; it is only built when the mask needs a gradient.
    Tensor ds = ctx.needs_input_grad(3) ? empty({n.B, n.H, n.Tq, n.Tk}, ct) : Tensor();
    const Tensor maskr = float_mask(mask, ct);
    const AttentionAlgorithm& algorithm = ctx.state.algorithm;
    const bool tiled = algorithm.kernel == AttentionKernel::kTiled;
    const kernels::AttentionTiles tiles{algorithm.tile_q, algorithm.tile_k};
    if (auto* bf16 = kernels::attention_backward_bf16.get();
        bf16 && !tiled && q.dtype() == kBFloat16 && g[0].dtype() == kBFloat16) {
      bf16(rows_of<const BFloat16>(readable(g[0])), rows_of<const BFloat16>(readable(q)),
           rows_of<const BFloat16>(readable(k), false, n.group),
           rows_of<const BFloat16>(readable(v), false, n.group),
           rows_of<const BFloat16>(readable(out)), lse.data<float>(),
           rows_of<float>(dq.tensor, dq.add), rows_of<float>(dk.tensor, dk.add, n.group),
           rows_of<float>(dv.tensor, dv.add, n.group), ds.defined() ? ds.data<float>() : nullptr, n,
           static_cast<float>(ctx.state.scale), mask_view<float>(maskr, ctx.state.causal));
    } else {
      const Tensor qr = kernel_input(q, ct), kr = kernel_input(k, ct), vr = kernel_input(v, ct);
      const Tensor outr = kernel_input(out, ct), gr = kernel_input(g[0], ct);
      detail::visit_compute(ct, [&]<class F>() {
        auto run = [&](auto* kernel, auto... tiles_if_tiled) {
          kernel(rows_of<const F>(gr), rows_of<const F>(qr), rows_of<const F>(kr, false, n.group),
                 rows_of<const F>(vr, false, n.group), rows_of<const F>(outr), lse.data<F>(),
                 rows_of<F>(dq.tensor, dq.add), rows_of<F>(dk.tensor, dk.add, n.group),
                 rows_of<F>(dv.tensor, dv.add, n.group), ds.defined() ? ds.data<F>() : nullptr, n,
                 static_cast<F>(ctx.state.scale), mask_view<F>(maskr, ctx.state.causal),
                 tiles_if_tiled...);
        };
        if (tiled) run(kernels::attention_tiled_backward.get<F>(), tiles);
        else run(kernels::attention_backward.get<F>());
      });
    }
    // The mask was read broadcast: each of its elements served every copy, so its gradient
    // sums dS over the broadcast dims.
    const DType dt = q.dtype();
    return {detail::finish_grad(dq, dt), detail::finish_grad(dk, dt), detail::finish_grad(dv, dt),
            ds.defined() ? detail::round_to(sum_to(ds, mask.shape()), mask.dtype()) : Tensor()};
  }
};

}  // namespace

template <class F>
F kernels::attention_score(const F* qi, const F* kj, int64_t D, F scale, const AttentionMask<F>& m,
                           int64_t b, int64_t h, int64_t i, int64_t j) {
  return score(qi, kj, D, scale, m, b, h, i, j);
}
template float kernels::attention_score(const float*, const float*, int64_t, float,
                                        const AttentionMask<float>&, int64_t, int64_t, int64_t,
                                        int64_t);
template double kernels::attention_score(const double*, const double*, int64_t, double,
                                         const AttentionMask<double>&, int64_t, int64_t, int64_t,
                                         int64_t);

namespace {
thread_local AttentionAlgorithm t_algorithm;
}  // namespace

AttentionAlgorithm attention_algorithm() { return t_algorithm; }

void set_attention_algorithm(const AttentionAlgorithm& algorithm) {
  TG_CHECK(algorithm.tile_q >= 1 && algorithm.tile_k >= 1, ValueError,
           "set_attention_algorithm: tiles must hold at least one query and one key, got "
           "tile_q {}, tile_k {}",
           algorithm.tile_q, algorithm.tile_k);
  t_algorithm = algorithm;
}

constinit kernels::Kernel<kernels::AttentionForwardBF16> kernels::attention_forward_bf16{nullptr};
constinit kernels::Kernel<kernels::AttentionBackwardBF16> kernels::attention_backward_bf16{nullptr};
constinit kernels::KernelPair<kernels::AttentionForward, float, double> kernels::attention_forward{
    tg::attention_forward<float>, tg::attention_forward<double>};
constinit kernels::KernelPair<kernels::AttentionBackward, float, double>
    kernels::attention_backward{tg::attention_backward<float>, tg::attention_backward<double>};

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask, bool causal, std::optional<double> scale,
                                    bool enable_gqa, Here here) {
  return Attention::apply_at(here, q, k, v, mask, causal, scale, enable_gqa);
}

}  // namespace tg
