// ops/mse_loss.h — mean squared error, the regression loss.
//
// input and target have the same shape (any rank, no broadcasting, as PyTorch warns);
// d = input - target, and the loss is
//   reduction "mean": sum(d^2) / numel   (a 0-d tensor)
//   reduction "sum":  sum(d^2)           (a 0-d tensor)
//   reduction "none": d^2                (input's shape)
// Both input and target may require grad. Dtypes: float32, float64, float16, bfloat16
// (half types computed in float32); both tensors must share one dtype.
#pragma once

#include <string_view>

#include "core/autograd.h"

namespace tg {

/// The squared error between input and target, reduced by "mean" (default), "sum" or "none".
Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean",
                Here here = Here::current());

}  // namespace tg
