// ops/rope.h — rotary position embedding (RoPE), in the "rotate-half" pairing.
//
// Shape legend: B = batch, H = heads, T = time, D = head dim (even); `...` = leading dims.
//
//   x (..., T, D), positions int64 (T)  ->  rope(x, positions)   (..., T, D)
//
// Pairing ("rotate-half", as GPT-NeoX and Hugging Face Llama): channel i < D/2 is paired
// with channel i + D/2 — NOT with its neighbour i + 1 (the "interleaved" pairing (2i, 2i+1)
// of the original RoFormer paper, GPT-J and Meta's Llama code, which gives different numbers
// for the same weights). Each pair of row t is rotated by the angle
//   a_i = positions[t] * theta^(-2i/D)
//   y_i       = x_i cos(a_i) - x_{i+D/2} sin(a_i)
//   y_{i+D/2} = x_{i+D/2} cos(a_i) + x_i sin(a_i)
// The angles are computed in double and only cos/sin are rounded to the compute type.
// float16/bfloat16 inputs are computed in float32 and rounded once to their dtype.
#pragma once

#include "core/autograd.h"

namespace tg {

/// Rotates the channel pairs (i, i + D/2) of each row of x (..., T, D) by the angle
/// position * theta^(-2i/D). positions is int64 [T] (one position per row of T, shared by the
/// leading dims), or any int64 shape with T last that broadcasts against x's leading dims,
/// e.g. [B, 1, T] for x [B, H, T, D] (per-sequence positions). D even; theta > 0;
/// x floating point of rank >= 2. Gradients flow to x only.
Tensor rope(const Tensor& x, const Tensor& positions, double theta = 10000.0,
            Here here = Here::current());

}  // namespace tg
