// nn/accounting.h — what one training step of a TransformerLM costs, worked out on paper
// and counted on the tape (course chapter 18).
//
// Two numbers decide whether a step fits and how long it takes:
//   forward FLOPs   the multiply-adds of the matrix products (2 FLOPs each): the linear
//                   layers and attention's two products. Everything else (norms, softmax,
//                   activations, the loss) is O(elements), a few FLOPs per number, and is
//                   left out, as the usual "6 N" rule of thumb leaves it out;
//   saved bytes     what the forward keeps for backward: every tensor the ops saved with
//                   save_for_backward, as the tape counts it (core/tape_print.h).
// A backward costs about twice the forward's FLOPs: each product y = x W^T needs two of
// the same size, dx = dy W and dW = dy^T x (chapter 18 derives attention's share).
//
//   estimate_step(config, B, T)   the formulas, from the config alone (the exercise)
//   measure_step(loss)            the same two numbers counted op by op from the tape
//
// The test holds the two to each other exactly, for many shapes: a formula that forgets a
// product, or a saved tensor, fails.
#pragma once

#include <cstdint>

#include "core/tape_print.h"
#include "nn/transformer.h"

namespace tg::nn {

struct StepCost {
  int64_t forward_flops = 0;  ///< 2 x the multiply-adds of the matrix products
  int64_t saved_bytes = 0;    ///< what the tape holds for backward
  bool operator==(const StepCost&) const = default;
};

/// The forward FLOPs of one op on the tape, from its shapes: linear (..., I) x (O, I)
/// costs 2 N I O (N the rows of x); matmul 2 M K N per matrix of the batch; attention
/// 2 Tq Tk (D + Dv) per batch and head (every query against every key, as a dense
/// kernel computes them: the causal mask's zeros are counted too); any other op 0.
int64_t forward_flops(const TapeEntry& op);

/// Sums forward_flops and the saved bytes over the tape that leads to `loss`.
/// MisuseError if loss is undefined; call it before backward frees the tape.
StepCost measure_step(const Tensor& loss);

/// The cost of model(ids) then cross_entropy(logits.reshape({B * T, V}), targets) for a
/// TransformerLM with `config`, float32, on B sequences of T tokens: what measure_step
/// counts for that step. ValueError for a config that is not valid or B, T < 1, or T
/// longer than the context, or one with grouped-query attention (not in the formula).
StepCost estimate_step(const TransformerConfig& config, int64_t B, int64_t T);

}  // namespace tg::nn
