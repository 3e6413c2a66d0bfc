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

#include <optional>

#include "core/autograd.h"

namespace tg {

/// softmax(scale * q k^T + mask) v over the last two dims, for q (B, H, Tq, D), k (B, H, Tk, D),
/// v (B, H, Tk, Dv); returns (B, H, Tq, Dv). float32 or float64, all of one dtype.
///
/// - `scale` defaults to 1 / sqrt(D); it must be finite and > 0.
/// - `mask` (optional) broadcasts to (B, H, Tq, Tk), e.g. (Tq, Tk) or (B, 1, Tq, Tk):
///   bool (true = may attend) or q's floating dtype (added to the scores; -inf blocks a key).
///   A floating mask that requires grad gets one: dL/dmask = dL/ds summed over the dims it was
///   broadcast along (the way ALiBi-style learned biases are trained).
/// - `causal` masks key j for query i when j > i (top-left aligned, torch.ones(Tq, Tk).tril());
///   giving both `mask` and `causal` is a ValueError, as in PyTorch.
/// - A query whose keys are all masked outputs zeros and passes zero gradient (PyTorch >= 2.5's
///   "safe softmax"), instead of the NaN of a 0/0 softmax.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask = Tensor(), bool causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    Here here = Here::current());

}  // namespace tg
