// core/broadcast.h — NumPy/PyTorch broadcasting.
//
// Two shapes broadcast when, aligned at their last dims, each pair of sizes is equal or
// one of them is 1; a missing leading dim counts as 1. The result takes the larger size:
//
//     (8, 1, 6, 1)
//        (7, 1, 5)
//   -> (8, 7, 6, 5)
//
// A broadcast never copies: the smaller tensor is viewed with stride 0 along every
// dim it is stretched over (Tensor::expand), so one element is read many times.
#pragma once

#include <string_view>

#include "core/shape.h"

namespace tg {

class Tensor;

/// The broadcast result of two shapes; ShapeError naming `op`, both shapes and the
/// first clashing dim if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op = "broadcast_shapes");

/// The gradient rule of broadcasting: if x of shape `shape` was broadcast to grad's shape,
/// each element of x was used once per copy, so dx sums grad over every copy: over the
/// leading dims x lacked and over the dims where x had size 1. Not recorded on the tape.
Tensor sum_to(const Tensor& grad, const Shape& shape);
}  // namespace tg
