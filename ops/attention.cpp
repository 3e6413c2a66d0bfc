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

#include <cmath>
#include <limits>

#include "core/broadcast.h"
#include "core/factories.h"

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
    const Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    Tensor out = empty({n.B, n.H, n.Tq, n.Dv}, q.dtype());
    Tensor lse = empty({n.B, n.H, n.Tq}, q.dtype());
    Tensor scratch = empty({n.Tk}, q.dtype());
    visit_dtype(q.dtype(), [&]<class F>() {
      if constexpr (std::is_floating_point_v<F>) {
        attention_forward_kernel(qc.data<F>(), kc.data<F>(), vc.data<F>(), out.data<F>(),
                                 lse.data<F>(), scratch.data<F>(), n, static_cast<F>(scale),
                                 mask_view<F>(mask, causal));
      }
    });
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
    const Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    const Tensor gc = g[0].contiguous();
    const bool need_mask = ctx.needs_input_grad(3);
    Tensor dq = ctx.needs_input_grad(0) ? zeros(q.shape(), dt) : Tensor();
    Tensor dk = ctx.needs_input_grad(1) ? zeros(k.shape(), dt) : Tensor();
    Tensor dv = ctx.needs_input_grad(2) ? zeros(v.shape(), dt) : Tensor();
    // dS has the full (B, H, Tq, Tk) shape; it is only built when the mask needs a gradient.
    Tensor ds = need_mask ? zeros({n.B, n.H, n.Tq, n.Tk}, dt) : Tensor();
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
