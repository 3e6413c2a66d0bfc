// core/gradcheck_report.h — gradcheck's report, apart from the check (internal).
#pragma once

#include <string>
#include <vector>

#include "core/gradcheck.h"

namespace tg::detail {

/// An entry passes when its error is within its tolerance (a NaN error never does).
inline bool passes(const GradcheckEntry& e) { return e.error <= e.tolerance; }

/// How far a lower-precision backward may be from the float64 one, as a fraction of the
/// input's largest float64 gradient: a few hundred units in the last place for float32,
/// a few for the 11 and 8 bits of float16 and bfloat16.
inline double low_precision_tolerance(DType dtype) {
  switch (dtype) {
    case kFloat32: return 1e-4;
    case kFloat16: return 5e-3;
    default: return 4e-2;  // bfloat16
  }
}

/// The worst entries first (by error / tolerance; NaN counts as worst), at most `limit`.
std::vector<GradcheckEntry> worst_of(std::vector<GradcheckEntry> all, int limit);

/// The report: inputs without a gradient, then the failures (worst first), the kinks, and
/// the comparison of lower-precision backwards with the float64 one. Empty when there is
/// nothing to say.
std::string gradcheck_report(const GradcheckResult& r, const std::vector<Tensor>& inputs,
                             const GradcheckOptions& opt);

}  // namespace tg::detail
