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
// rtol 1e-3).
//
// Kinks. Where f has a kink (relu at 0), the two one-sided slopes (F(x+eps) - F(x)) / eps
// and (F(x) - F(x-eps)) / eps disagree, the central difference is their average, and a
// correct backward, which returns one sub-gradient, fails the rule above. gradcheck tells a
// kink from a steep curve by the step: a curve's jump between the one-sided slopes halves
// with eps, a kink's does not. At a kink the backward passes when its value lies between
// the one-sided slopes, and the element is reported apart, with the value it chose.
//
// Precision. The numeric side needs float64: with float32's 7 digits the difference
// quotient is mostly rounding noise. An input of a lower precision is therefore checked
// through a float64 copy (f runs on the copy), and its own backward is then compared with
// the float64 one at a tolerance for its dtype.
//
// Fast mode. Instead of one element at a time, compare along a few random unit directions
// u per input: the analytic g . u with the numeric (F(x + eps u) - F(x - eps u)) / 2 eps.
// Two evaluations of f per direction whatever the size of the input, at the price of
// saying which input is wrong rather than which element.
//
// tapegrad has no double backward (a backward is not itself recorded on the tape), so
// there is no gradgradcheck.
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
  /// Compare along `directions` random unit directions per input instead of element by
  /// element (see the header comment).
  bool fast_mode = false;
  int directions = 3;
  /// Compare the backward of a float32/float16/bfloat16 input with the float64 one.
  bool check_low_precision = true;
  /// How many of the worst failures, and of the kinks, the result lists.
  int max_listed = 5;
  uint64_t seed = 0;
};

/// One compared element (or, in fast mode, one direction) of one input.
struct GradcheckEntry {
  size_t input = 0;
  /// Flat position in the input, in row-major order; in fast mode, the direction's number.
  int64_t element = 0;
  /// "element 4 (index (1, 1))" or "direction 2 of 3".
  std::string where;
  /// For a low-precision entry: the input's own backward, and the float64 backward.
  double analytic = 0, numeric = 0;
  /// The one-sided slopes (F(x) - F(x - eps)) / eps and (F(x + eps) - F(x)) / eps.
  double left = 0, right = 0;
  /// How far analytic is from what is accepted, and the tolerance it was held to.
  double error = 0, tolerance = 0;
  bool at_kink = false;
};

struct GradcheckResult {
  /// True when nothing failed (elements at a kink whose value is accepted do not fail).
  bool ok = true;
  /// A report of the failures (worst first) and of the kinks; empty when ok with no kink.
  std::string message;
  /// Elements (directions in fast mode) compared with finite differences.
  int64_t checked = 0;
  /// How many of them failed, and the worst, by error / tolerance (at most max_listed).
  int64_t failed = 0;
  std::vector<GradcheckEntry> worst;
  /// How many were at a kink (failed or not), and the first few.
  int64_t kinks = 0;
  std::vector<GradcheckEntry> at_kinks;
  /// Low-precision inputs: elements whose own backward differs from the float64 one.
  int64_t low_precision_failed = 0;
  std::vector<GradcheckEntry> low_precision_worst;
  /// Inputs whose gradient slot came back empty (the output does not depend on them, or
  /// the backward forgot them).
  std::vector<size_t> no_gradient;
  explicit operator bool() const { return ok; }
};

/// Compares fn's backward with finite differences for every input that requires grad.
/// `fn` must be deterministic; the inputs (float64 ones, or float64 copies of the others)
/// are perturbed in place and restored.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace tg
