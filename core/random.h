// core/random.h — random tensors, drawn from a Generator (the default one if none given).
//
// Elements are drawn in row-major order, so the same seed gives the same tensor on every
// machine; see core/generator.h for exactly which stream words each element uses.
#pragma once

#include "core/generator.h"
#include "core/tensor.h"

namespace tg {

/// Uniform on [0, 1) (floating dtypes only).
Tensor rand(const Shape& shape, DType dtype = kFloat32, Generator& gen = default_generator());
/// Standard normal (floating dtypes only).
Tensor randn(const Shape& shape, DType dtype = kFloat32, Generator& gen = default_generator());
/// Uniform integers in [low, high).
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = kInt64,
               Generator& gen = default_generator());
/// A random permutation of 0 .. n-1 (Fisher-Yates), int64.
Tensor randperm(int64_t n, Generator& gen = default_generator());
/// 1 with probability p[i], else 0; same shape and dtype as `p`, whose values must be in
/// [0, 1]. Element i uses one float64 uniform u: the result is u < p[i].
Tensor bernoulli(const Tensor& p, Generator& gen = default_generator());
/// 1 with probability p, else 0.
Tensor bernoulli(const Shape& shape, double p, DType dtype = kFloat32,
                 Generator& gen = default_generator());

}  // namespace tg
