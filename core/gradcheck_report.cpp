// core/gradcheck_report.cpp — what gradcheck tells: the counts and entries as text.
#include "core/gradcheck_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tg {
namespace {

std::string describe_input(const std::vector<Tensor>& inputs, size_t i) {
  const Tensor& x = inputs[i];
  if (x.dtype() == kFloat64) return fmt::format("input {} (shape {})", i, x.shape());
  return fmt::format("input {} ({}, shape {})", i, x.dtype(), x.shape());
}

std::string plural(int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

namespace detail {

/// The worst entries first (by error / tolerance; NaN counts as worst), at most `limit`.
std::vector<GradcheckEntry> worst_of(std::vector<GradcheckEntry> all, int limit) {
  auto badness = [](const GradcheckEntry& e) {
    constexpr double kWorst = std::numeric_limits<double>::infinity();
    if (std::isnan(e.error) || e.tolerance <= 0) return kWorst;
    return e.error / e.tolerance;
  };
  std::stable_sort(all.begin(), all.end(), [&](const GradcheckEntry& a, const GradcheckEntry& b) {
    return badness(a) > badness(b);
  });
  if (all.size() > static_cast<size_t>(limit)) all.resize(static_cast<size_t>(limit));
  return all;
}

// The report: inputs without a gradient, then failures (worst first), kinks, and the
// low-precision comparison.
std::string gradcheck_report(const GradcheckResult& r, const std::vector<Tensor>& inputs,
                             const GradcheckOptions& opt) {
  std::string out;
  auto line = [&](const std::string& s) { out += (out.empty() ? "" : "\n") + s; };
  for (size_t i : r.no_gradient) {
    line(
        fmt::format("gradcheck: {} got no gradient: the backward left its slot empty, or the "
                    "output does not depend on it",
                    describe_input(inputs, i)));
  }
  const bool fast = opt.fast_mode;
  const char* unit = fast ? "directions" : "elements";
  if (r.failed > 0) {
    line(
        fmt::format("gradcheck: {} of {} {} checked {} with finite differences (allowed: atol "
                    "{} + rtol {} * |numeric|){}:",
                    r.failed, r.checked, r.checked == 1 ? (fast ? "direction" : "element") : unit,
                    r.failed == 1 ? "disagrees" : "disagree", opt.atol, opt.rtol,
                    r.failed > 1 ? fmt::format(", the worst {} first", r.worst.size()) : ""));
    for (const GradcheckEntry& e : r.worst) {
      if (e.at_kink) {
        line(
            fmt::format("  {}, {}, at a kink: analytic {:.10g} is not between the one-sided "
                        "slopes {:.10g} and {:.10g}; it is {:.3g} outside, allowed {:.3g}",
                        describe_input(inputs, e.input), e.where, e.analytic, e.left, e.right,
                        e.error, e.tolerance));
      } else {
        line(fmt::format(
            "  {}, {}: analytic {:.10g} vs numeric {:.10g}; |difference| {:.3g} "
            "exceeds {:.3g}",
            describe_input(inputs, e.input), e.where, e.analytic, e.numeric, e.error, e.tolerance));
      }
    }
  }
  if (r.kinks > 0) {
    line(
        fmt::format("gradcheck: {} at a kink, where the one-sided slopes differ and any value "
                    "between them is a sub-gradient the backward may choose:",
                    plural(r.kinks, fast ? "direction" : "element", unit)));
    for (const GradcheckEntry& e : r.at_kinks) {
      line(
          fmt::format("  {}, {}: slopes {:.10g} (left) and {:.10g} (right); the backward chose "
                      "{:.10g}{}",
                      describe_input(inputs, e.input), e.where, e.left, e.right, e.analytic,
                      passes(e) ? "" : ", which is not between them"));
    }
  }
  if (r.low_precision_failed > 0) {
    line(
        fmt::format("gradcheck: {} of lower-precision inputs differ from the float64 backward by "
                    "more than {} for float32, {} for float16, {} for bfloat16, times the "
                    "input's largest gradient{}:",
                    plural(r.low_precision_failed, "gradient element", "gradient elements"),
                    low_precision_tolerance(kFloat32), low_precision_tolerance(kFloat16),
                    low_precision_tolerance(kBFloat16),
                    r.low_precision_failed > 1
                        ? fmt::format(", the worst {} first", r.low_precision_worst.size())
                        : ""));
    for (const GradcheckEntry& e : r.low_precision_worst) {
      line(fmt::format(
          "  {}, {}: its own backward {:.10g} vs float64 {:.10g}; |difference| "
          "{:.3g} exceeds {:.3g}",
          describe_input(inputs, e.input), e.where, e.analytic, e.numeric, e.error, e.tolerance));
    }
  }
  return out;
}

}  // namespace detail
}  // namespace tg
