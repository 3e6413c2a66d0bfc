// ops/dropout.h — inverted dropout: zero random elements while training, rescale the rest.
//
// Shape legend: B = batch, T = time, C = channels; x may have any shape.
//
//   x (...)  ->  dropout(x, p, training, gen)  (...)
//   training, 0 < p < 1:  y = x * m / (1 - p),  m ~ Bernoulli(1 - p) per element, from gen
//   otherwise:            y = x (the same tensor: no copy, nothing recorded)
#pragma once

#include "core/autograd.h"
#include "core/generator.h"

namespace tg {

/// Inverted dropout, like torch.nn.functional.dropout(x, p, training). With training and
/// 0 < p < 1 each element is kept with probability 1 - p (one float64 uniform u from `gen`
/// per element, in row-major order: kept iff u < 1 - p) and kept elements are scaled by
/// 1 / (1 - p), so the expected value of y is x. p == 1 gives x * 0 (zeros, as PyTorch).
/// With !training or p == 0 it returns x itself (as PyTorch does) and draws nothing.
/// x is floating point; p must be in [0, 1] (ValueError otherwise).
Tensor dropout(const Tensor& x, double p, bool training, Generator& gen = default_generator(),
               Here here = Here::current());

}  // namespace tg
