// ops/attention.h — scaled dot-product attention, the core of a Transformer block.
//
// Shape legend: B = batch, H = heads, T = time (Tq queries, Tk keys), D = head dim
// (Dv for the values).
//
//   q (B, H, Tq, D), k (B, H, Tk, D), v (B, H, Tk, Dv)  ->  out (B, H, Tq, Dv)
//
// Per batch b, head h and query i (one "row"):
//   s_ij  = scale * q_i . k_j  (+ mask_ij)          scores, one per key
//   p_ij  = exp(s_ij - max_j s) / sum_j exp(...)    softmax over the keys
//   out_i = sum_j p_ij v_j                          a weighted mean of the value rows
// with the same semantics as PyTorch 2.x's torch.nn.functional.scaled_dot_product_attention.
#pragma once

#include <limits>
#include <optional>

#include "core/autograd.h"
#include "ops/kernels.h"

namespace tg {

/// softmax(scale * q k^T + mask) v over the last two dims, for q (B, H, Tq, D), k (B, H, Tk, D),
/// v (B, H, Tk, Dv); returns (B, H, Tq, Dv). float32 or float64, all of one dtype.
///
/// - `enable_gqa` (grouped-query attention, as in PyTorch 2.5): k and v may have fewer heads,
///   Hkv, dividing H; query head h then reads kv head h / (H / Hkv), so each kv head serves a
///   group of H / Hkv consecutive query heads (Hkv = 1 is multi-query attention, Hkv = H the
///   plain multi-head case), and dk, dv sum over the heads of their group.
/// - `scale` defaults to 1 / sqrt(D); it must be finite and > 0.
/// - `mask` (optional) broadcasts to (B, H, Tq, Tk), e.g. (Tq, Tk) or (B, 1, Tq, Tk):
///   bool (true = may attend) or q's floating dtype (added to the scores; -inf blocks a key).
///   A floating mask that requires grad gets one: dL/dmask = dL/ds summed over the dims it was
///   broadcast along (the way ALiBi-style learned biases are trained).
/// - `causal` masks key j for query i when j > i (top-left aligned, torch.ones(Tq, Tk).tril());
///   giving both `mask` and `causal` is a ValueError, as in PyTorch.
/// - A query whose keys are all masked outputs zeros and passes zero gradient (PyTorch >= 2.5's
///   "safe softmax"), instead of the NaN of a 0/0 softmax.
/// - Which kernel runs is the thread's AttentionAlgorithm (below), recorded on the tape with
///   the node: its backward runs the same kernel, whatever the choice is by then.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask = Tensor(), bool causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false, Here here = Here::current());

/// The two kernels of scaled_dot_product_attention. The same math, the same saved tensors (q,
/// k, v, out and one logsumexp per query); they differ in the order of the work.
///   kRows:  one query row at a time against all its keys (ops/attention.cpp, chapter 12).
///   kTiled: a tile of queries against a tile of keys at a time, the softmax folded in tile
///           by tile with the online rescaling (ops/attention_tiled.cpp, chapter 21). Its
///           scratch is a tile_q x tile_k block of scores, whatever Tq and Tk.
enum class AttentionKernel { kRows, kTiled };

/// A kernel and, for kTiled, its tile sizes (queries and keys per tile, each >= 1). 128 x 128
/// float32 scores are 64 KiB: the fastest of the sizes tried by tapegrad-bench-attention
/// (docs/performance.md, "Attention as T grows").
struct AttentionAlgorithm {
  AttentionKernel kernel = AttentionKernel::kRows;
  int64_t tile_q = 128;
  int64_t tile_k = 128;
};

/// The algorithm attention runs on this thread (kRows until set), like PyTorch's
/// torch.nn.attention.sdpa_kernel: a per-thread choice, not an argument of the op.
AttentionAlgorithm attention_algorithm();
/// Sets it for this thread; ValueError for a tile size below 1.
void set_attention_algorithm(const AttentionAlgorithm& algorithm);

/// Runs attention with `algorithm` on this thread for the lifetime of the guard.
class AttentionAlgorithmGuard {
 public:
  explicit AttentionAlgorithmGuard(const AttentionAlgorithm& algorithm)
      : previous_(attention_algorithm()) {
    set_attention_algorithm(algorithm);
  }
  ~AttentionAlgorithmGuard() { set_attention_algorithm(previous_); }
  AttentionAlgorithmGuard(const AttentionAlgorithmGuard&) = delete;
  AttentionAlgorithmGuard& operator=(const AttentionAlgorithmGuard&) = delete;

 private:
  AttentionAlgorithm previous_;
};

}  // namespace tg

// ---------------------------------------------------------------- the kernels
// Reference (ops/attention.cpp) and fast (ops/fast/attention.cpp, on the blocked GEMM),
// chosen by ops/kernels.h. Operands are read and written in place through their strides: a
// (B, H, T, D) view of a (B, T, 3C) projection is fine, as long as each row's last dim is
// contiguous. The write rule of ops/kernels.h.
namespace tg::kernels {

/// The score of a masked key: its exp is 0, so it drops out of the softmax.
inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// The sizes of one call (see the shape legend). H counts the query heads; k, v, dk and dv
/// have H / group heads (group = 1 unless grouped-query attention).
struct AttentionDims {
  int64_t B, H, Tq, Tk, D, Dv;
  int64_t group = 1;  // query heads per kv head
};

/// One (B, H, T, X) operand, in place: row t of (b, h) starts at row(b, h, t) and its X
/// elements are contiguous. For a gradient, `add` is GradOut's (ops/kernels.h); a null
/// `data` stands for a gradient nobody asked for. A kv operand (k, v, dk, dv) has `group` set:
/// row(b, h, t) with a QUERY head h gives the row of kv head h / group, so the kernels index
/// every operand by the query head.
template <class F>
struct HeadRows {
  F* data = nullptr;
  int64_t sb = 0, sh = 0, st = 0;  // strides of b, h, t, in elements
  bool add = false;
  int64_t group = 1;
  F* row(int64_t b, int64_t h, int64_t t) const { return data + b * sb + h / group * sh + t * st; }
  explicit operator bool() const { return data != nullptr; }
};

/// Which keys a query may see and what is added to its scores: a bool mask (true = may
/// attend) or a floating mask read through broadcast strides (0 along broadcast dims), and
/// the causal rule j <= i.
template <class F>
struct AttentionMask {
  const bool* keep = nullptr;
  const F* bias = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};
  bool causal = false;
  int64_t at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return b * stride[0] + h * stride[1] + i * stride[2] + j * stride[3];
  }
};

/// out (B, H, Tq, Dv) = softmax(s) v per query row, and lse (B, H, Tq, contiguous) = the
/// row's log-sum-exp (-inf for a row whose every key is masked).
template <class F>
using AttentionForward = void(HeadRows<const F> q, HeadRows<const F> k, HeadRows<const F> v,
                              HeadRows<F> out, F* lse, const AttentionDims& n, F scale,
                              const AttentionMask<F>& mask);
/// dq, dk, dv (each may be null) and dmask (B, H, Tq, Tk, contiguous, written; null when the
/// mask needs no gradient), from dout, the inputs, out and lse.
template <class F>
using AttentionBackward = void(HeadRows<const F> dout, HeadRows<const F> q, HeadRows<const F> k,
                               HeadRows<const F> v, HeadRows<const F> out, const F* lse,
                               HeadRows<F> dq, HeadRows<F> dk, HeadRows<F> dv, F* dmask,
                               const AttentionDims& n, F scale, const AttentionMask<F>& mask);

extern KernelPair<AttentionForward, float, double> attention_forward;
extern KernelPair<AttentionBackward, float, double> attention_backward;

/// The tiled kernels (AttentionKernel::kTiled): the same contract as the two above, plus the
/// tile sizes.
struct AttentionTiles {
  int64_t q, k;  // query rows and keys per tile
};
template <class F>
using AttentionTiledForward = void(HeadRows<const F> q, HeadRows<const F> k, HeadRows<const F> v,
                                   HeadRows<F> out, F* lse, const AttentionDims& n, F scale,
                                   const AttentionMask<F>& mask, AttentionTiles tiles);
template <class F>
using AttentionTiledBackward = void(HeadRows<const F> dout, HeadRows<const F> q,
                                    HeadRows<const F> k, HeadRows<const F> v, HeadRows<const F> out,
                                    const F* lse, HeadRows<F> dq, HeadRows<F> dk, HeadRows<F> dv,
                                    F* dmask, const AttentionDims& n, F scale,
                                    const AttentionMask<F>& mask, AttentionTiles tiles);
extern KernelPair<AttentionTiledForward, float, double> attention_tiled_forward;
extern KernelPair<AttentionTiledBackward, float, double> attention_tiled_backward;

/// s_ij = scale * q_i . k_j (+ the float mask), or -inf when key j is hidden from query i:
/// the one score of both reference kernels (defined in ops/attention.cpp, for float and
/// double).
template <class F>
F attention_score(const F* qi, const F* kj, int64_t D, F scale, const AttentionMask<F>& m,
                  int64_t b, int64_t h, int64_t i, int64_t j);

/// The first key no query row before i1 may see: i1 under the causal rule (j <= i), else Tk.
inline int64_t attention_key_end(const AttentionDims& n, bool causal, int64_t i1) {
  return causal ? std::min(n.Tk, i1) : n.Tk;
}

/// Sets rows t < T of a (B, H, T, X) gradient to zero, unless it adds into an existing .grad.
template <class F>
void zero_rows_unless_adding(HeadRows<F> g, int64_t B, int64_t H, int64_t T, int64_t X) {
  if (!g || g.add) return;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t t = 0; t < T; ++t) std::fill(g.row(b, h, t), g.row(b, h, t) + X, F(0));
    }
  }
}

/// bfloat16 q, k, v (and dout, out): the products on bfloat16 operands with float32 sums,
/// softmax and dS in float32, P and dS rounded to bfloat16 for the products that take them
/// (as FlashAttention does). out, lse, dq, dk and dv are float32, and the op rounds them
/// once. There is no reference version (get() is null on the reference path): the reference
/// story of a bfloat16 attention is the float one above, on inputs widened to float32.
using AttentionForwardBF16 = void(HeadRows<const BFloat16> q, HeadRows<const BFloat16> k,
                                  HeadRows<const BFloat16> v, HeadRows<float> out, float* lse,
                                  const AttentionDims& n, float scale,
                                  const AttentionMask<float>& mask);
using AttentionBackwardBF16 = void(HeadRows<const BFloat16> dout, HeadRows<const BFloat16> q,
                                   HeadRows<const BFloat16> k, HeadRows<const BFloat16> v,
                                   HeadRows<const BFloat16> out, const float* lse,
                                   HeadRows<float> dq, HeadRows<float> dk, HeadRows<float> dv,
                                   float* dmask, const AttentionDims& n, float scale,
                                   const AttentionMask<float>& mask);
extern Kernel<AttentionForwardBF16> attention_forward_bf16;
extern Kernel<AttentionBackwardBF16> attention_backward_bf16;

}  // namespace tg::kernels
