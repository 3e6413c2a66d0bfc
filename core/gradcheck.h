// core/gradcheck.h — checking a backward against finite differences.
//
// For f: inputs -> output and a fixed random upstream gradient v (seeded), the analytic
// side is what backward computes, g_i = v . d(output)/d(x_i) (tg::grad), and the numeric
// side perturbs each element of each input by ±eps and measures
//
//     central (2-point):  (F(x + eps e_j) - F(x - eps e_j)) / (2 eps)         error O(eps^2)
//     4-point stencil:    (-F(x+2eps) + 8F(x+eps) - 8F(x-eps) + F(x-2eps)) / (12 eps)  O(eps^4)
//
// with F(x) = sum(v * f(x)) accumulated in double. An element passes when
// |analytic - numeric| <= atol + rtol * |numeric| (PyTorch's defaults: eps 1e-6, atol 1e-5,
// rtol 1e-3). Inputs that require grad must be float64: with float32's 7 digits, the
// difference quotient would be mostly rounding noise.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tg {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  /// Use the 4-point stencil instead of central differences.
  bool four_point = false;
  /// Inputs with more elements than this are checked on a seeded sample of this many.
  int64_t max_elements_per_input = 2000;
  uint64_t seed = 0;
};

struct GradcheckResult {
  bool ok = true;
  /// Empty when ok; otherwise which input, element, both values and the tolerance.
  std::string message;
  explicit operator bool() const { return ok; }
};

/// Compares fn's backward with finite differences for every input that requires grad.
/// `fn` must be deterministic; the inputs are perturbed in place and restored.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace tg
