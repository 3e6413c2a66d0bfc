// nn/accounting.cpp — step cost on paper (estimate_step) and on the tape (measure_step).
// Tests: tests/nn/accounting_test.cpp. Course: docs/course/18-accounting.md.
//
// Legend: B batch, T tokens per sequence, N = B T rows, C d_model, F d_ff, V vocab,
// H heads (C = H D), L layers. float32: 4 bytes a number; ids and positions are int64.
//
// What each op of one step saves (core/autograd.h counts numel * element size of every
// tensor passed to save_for_backward; a parameter counts too, though it lives anyway):
//   embedding       the ids                                    8 N
//   rms_norm        x, the weight, one rstd per row            4 (N C + C + N)
//   linear (I->O)   x and the weight (no bias here)            4 (N I + O I)
//   rope            the positions                              8 T
//   attention       q, k, v, out and one logsumexp per row     4 (4 N C + B H T)
//   add_rms_norm    the sum h, the weight, rstd                4 (N C + C + N)
//   swiglu          both inputs                                4 (2 N F)
//   cross_entropy   the logits, the targets, lse per row       4 N V + 8 N + 4 N
// and views (split, reshape, transpose) and add save nothing.
#include "nn/accounting.h"

#include "core/error.h"

namespace tg::nn {

int64_t forward_flops(const TapeEntry& op) {
  auto prod = [](const Shape& s, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t d = from; d < to; ++d) n *= s[d];
    return n;
  };
  if (op.op == "linear" && op.inputs.size() >= 2) {
    const Shape& x = op.inputs[0].shape;
    const Shape& w = op.inputs[1].shape;  // (O, I)
    return 2 * prod(x, 0, x.size() - 1) * w[1] * w[0];
  }
  if (op.op == "matmul" && op.inputs.size() == 2 && !op.outputs.empty()) {
    const Shape& a = op.inputs[0].shape;  // (..., M, K) or (K)
    const Shape& y = op.outputs[0].shape;
    return 2 * prod(y, 0, y.size()) * a.back();  // one K-long dot product per output
  }
  if (op.op == "scaled_dot_product_attention" && op.inputs.size() >= 3) {
    const Shape& q = op.inputs[0].shape;  // (B, H, Tq, D)
    const Shape& k = op.inputs[1].shape;  // (B, H, Tk, D)
    const Shape& v = op.inputs[2].shape;  // (B, H, Tk, Dv)
    return 2 * q[0] * q[1] * q[2] * k[2] * (q[3] + v[3]);
  }
  return 0;
}

StepCost measure_step(const Tensor& loss) {
  StepCost cost;
  for (const TapeEntry& op : tape_entries(loss)) {
    cost.forward_flops += forward_flops(op);
    cost.saved_bytes += static_cast<int64_t>(op.saved_bytes);
  }
  return cost;
}

StepCost estimate_step(const TransformerConfig& config, int64_t B, int64_t T) {
  config.validate();
  TG_CHECK(B >= 1 && T >= 1 && T <= config.context_length, ValueError,
           "estimate_step: B = {} and T = {} must be >= 1, T at most the context length {}", B, T,
           config.context_length);
  TG_CHECK(config.kv_heads() == config.n_heads, ValueError,
           "estimate_step: the formula is for multi-head attention; n_kv_heads {} of n_heads {} "
           "(grouped-query attention) is not in it",
           config.n_kv_heads, config.n_heads);
  const int64_t C = config.d_model, F = config.d_ff, V = config.vocab_size;
  const int64_t H = config.n_heads, L = config.n_layers, N = B * T;
  StepCost cost;
  // exercise accounting.step_cost: begin
  // One layer's products: q, k and v (C -> 3C), the output projection (C -> C), the
  // feed-forward's w1 and w3 (C -> F) and w2 (F -> C); attention's scores q k^T and
  // weighted sum P v, each B H T T D multiply-adds with H D = C.
  const int64_t layer_flops = 2 * N * (3 * C * C + C * C + 2 * C * F + F * C) + 4 * B * T * T * C;
  const int64_t head_flops = 2 * N * C * V;
  cost.forward_flops = L * layer_flops + head_flops;
  const int64_t norm = 4 * (N * C + C + N);                    // x (or h), the weight, rstd
  const int64_t layer_bytes = norm + 4 * (N * C + 3 * C * C)   // attn_norm, qkv
                              + (config.rope ? 2 * 8 * T : 0)  // the positions of q and k
                              + 4 * (4 * N * C + B * H * T)    // attention
                              + 4 * (N * C + C * C) + norm     // proj, add_rms_norm
                              + 2 * 4 * (N * C + F * C)        // w1, w3
                              + 4 * 2 * N * F                  // swiglu
                              + 4 * (N * F + C * F);           // w2
  cost.saved_bytes = 8 * N + L * layer_bytes + norm + 4 * (N * C + V * C)  // ids, .., head
                     + 4 * N * V + 8 * N + 4 * N;                          // cross_entropy
  // exercise accounting.step_cost: end
  return cost;
}

}  // namespace tg::nn
