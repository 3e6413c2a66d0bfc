// core/gradcheck.cpp — finite-difference gradient checks.
#include "core/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/autograd.h"
#include "core/gradcheck_report.h"
#include "core/random.h"
#include "core/strided_loop.h"

namespace tg {
namespace {

// sum(v * y) in double, whatever y's dtype.
double project(const Tensor& y, const Tensor& v) {
  const Tensor y64 = y.to(kFloat64), v64 = v.to(kFloat64);
  const double* a = y64.data<double>();
  const double* b = v64.data<double>();
  double s = 0;
  for (int64_t i = 0; i < y64.numel(); ++i) s += a[i] * b[i];
  return s;
}

// Element offsets (in storage elements) of a tensor, in row-major order of its indices.
std::vector<int64_t> element_offsets(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(t.numel()));
  detail::for_each_offset<1>(t.shape(), {&t.strides()},
                             [&](const auto& o) { out.push_back(o[0]); });
  return out;
}

std::string element_name(const Shape& shape, int64_t flat) {
  DimVec idx(shape.size(), 0);
  for (int64_t rest = flat, d = static_cast<int64_t>(shape.size()); d-- > 0;) {
    idx[static_cast<size_t>(d)] = rest % shape[static_cast<size_t>(d)];
    rest /= shape[static_cast<size_t>(d)];
  }
  return fmt::format("element {} (index {})", flat, idx);
}

/// The slope of F at x_j by finite differences, where at(h) is F with x_j moved by h.
/// Two points: (F(x + e) - F(x - e)) / 2e, error O(e^2) (the e^2 terms of the two Taylor
/// series cancel). Four points: (-F(x + 2e) + 8 F(x + e) - 8 F(x - e) + F(x - 2e)) / 12e,
/// error O(e^4): the combination that also cancels the e^3 terms.
template <class At>
double finite_difference(At&& at, double e, bool four_point) {
  // exercise gradcheck.finite_difference: begin
  const double f_plus = at(e), f_minus = at(-e);  // F(x + e), F(x - e)
  if (four_point) {
    const double f_plus2 = at(2 * e), f_minus2 = at(-2 * e);
    return (-f_plus2 + 8 * f_plus - 8 * f_minus + f_minus2) / (12 * e);
  }
  return (f_plus - f_minus) / (2 * e);
  // exercise gradcheck.finite_difference: end
}

/// F at x moved by h along one element or direction, each h evaluated once: the stencil
/// and the kink test below ask for the same points.
class Probe {
 public:
  explicit Probe(std::function<double(double)> at) : at_(std::move(at)) {}
  double operator()(double h) {
    for (const auto& [step, value] : seen_)
      if (step == h) return value;
    seen_.emplace_back(h, at_(h));
    return seen_.back().second;
  }

 private:
  std::function<double(double)> at_;
  std::vector<std::pair<double, double>> seen_;
};

/// Compares one analytic value with the finite differences of `at` around x (F(x) = f0).
///
/// The one-sided slopes right = (F(x+e) - F(x)) / e and left = (F(x) - F(x-e)) / e differ
/// by jump(e) = (F(x+e) - 2F(x) + F(x-e)) / e. On a smooth curve that is e F'' + O(e^3):
/// doubling the step doubles it. Across a kink of slope change J it is about J whatever
/// the step. So a jump beyond the tolerance that does not double with the step is a kink;
/// there any value between the slopes is a sub-gradient the backward may choose.
GradcheckEntry judge(Probe& at, double f0, double analytic, const GradcheckOptions& opt) {
  const double e = opt.eps;
  GradcheckEntry r;
  r.analytic = analytic;
  r.numeric = finite_difference(at, e, opt.four_point);
  r.left = (f0 - at(-e)) / e;
  r.right = (at(e) - f0) / e;
  const double slope_tol = opt.atol + opt.rtol * std::max(std::abs(r.left), std::abs(r.right));
  const double jump = r.right - r.left;
  if (std::abs(jump) > slope_tol) {
    const double jump2 = (at(2 * e) - 2 * f0 + at(-2 * e)) / (2 * e);
    r.at_kink = std::abs(jump2 - 2 * jump) > slope_tol;
  }
  if (r.at_kink) {
    const double lo = std::min(r.left, r.right), hi = std::max(r.left, r.right);
    r.tolerance = slope_tol;
    r.error = std::isnan(analytic) ? analytic : std::max({lo - analytic, analytic - hi, 0.0});
  } else {
    r.tolerance = opt.atol + opt.rtol * std::abs(r.numeric);
    r.error = std::abs(analytic - r.numeric);
  }
  return r;
}

/// Records one judged entry in the result.
void record(GradcheckEntry entry, const GradcheckOptions& opt,
            std::vector<GradcheckEntry>& failures, GradcheckResult& r) {
  ++r.checked;
  if (entry.at_kink) {
    ++r.kinks;
    if (r.at_kinks.size() < static_cast<size_t>(opt.max_listed)) r.at_kinks.push_back(entry);
  }
  if (!detail::passes(entry)) failures.push_back(std::move(entry));
}

/// Element by element: x_j is moved in place through a pointer into x's storage.
void check_elements(const std::function<double()>& F, double f0, const Tensor& x, const Tensor& a64,
                    size_t input, const GradcheckOptions& opt, Generator& gen,
                    std::vector<GradcheckEntry>& failures, GradcheckResult& r) {
  const std::vector<int64_t> offsets = element_offsets(x);
  std::vector<int64_t> elements(offsets.size());
  for (size_t j = 0; j < elements.size(); ++j) elements[j] = static_cast<int64_t>(j);
  if (x.numel() > opt.max_elements_per_input) {
    const Tensor perm = randperm(x.numel(), gen);
    elements.assign(perm.data<int64_t>(), perm.data<int64_t>() + opt.max_elements_per_input);
  }
  double* data = x.data<double>();
  for (int64_t j : elements) {
    double& xj = data[offsets[static_cast<size_t>(j)]];
    const double saved = xj;
    Probe at([&](double h) {
      xj = saved + h;
      return F();
    });
    GradcheckEntry e = judge(at, f0, a64.data<double>()[j], opt);
    xj = saved;
    e.input = input;
    e.element = j;
    e.where = element_name(x.shape(), j);
    record(std::move(e), opt, failures, r);
  }
}

/// Fast mode: along random unit directions u, g . u against the slope of F(x + h u).
void check_directions(const std::function<double()>& F, double f0, const Tensor& x,
                      const Tensor& a64, size_t input, const GradcheckOptions& opt, Generator& gen,
                      std::vector<GradcheckEntry>& failures, GradcheckResult& r) {
  const std::vector<int64_t> offsets = element_offsets(x);
  const size_t n = offsets.size();
  double* data = x.data<double>();
  std::vector<double> saved(n);
  for (size_t j = 0; j < n; ++j) saved[j] = data[offsets[j]];
  for (int d = 0; d < opt.directions; ++d) {
    const Tensor u = randn({static_cast<int64_t>(n)}, kFloat64, gen);
    const double* uj = u.data<double>();
    double norm = 0, analytic = 0;
    for (size_t j = 0; j < n; ++j) norm += uj[j] * uj[j];
    norm = std::sqrt(norm);
    for (size_t j = 0; j < n; ++j) analytic += a64.data<double>()[j] * uj[j] / norm;
    Probe at([&](double h) {
      for (size_t j = 0; j < n; ++j) data[offsets[j]] = saved[j] + h * uj[j] / norm;
      return F();
    });
    GradcheckEntry e = judge(at, f0, analytic, opt);
    for (size_t j = 0; j < n; ++j) data[offsets[j]] = saved[j];
    e.input = input;
    e.element = d;
    e.where = fmt::format("direction {} of {}", d + 1, opt.directions);
    record(std::move(e), opt, failures, r);
  }
}

/// The backward's own precision: a float32 (float16, bfloat16) input's gradient, computed
/// by fn on the input itself, against the float64 one, within
/// detail::low_precision_tolerance(dtype) times the largest float64 gradient of that input.
void check_low_precision(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                         const std::vector<Tensor>& inputs, const std::vector<size_t>& checked,
                         const std::vector<Tensor>& analytic64, const Tensor& v,
                         const GradcheckOptions& opt, std::vector<GradcheckEntry>& failures,
                         GradcheckResult& r) {
  std::vector<size_t> low;  // positions in `checked`
  for (size_t k = 0; k < checked.size(); ++k)
    if (inputs[checked[k]].dtype() != kFloat64 && analytic64[k].defined()) low.push_back(k);
  if (low.empty() || !opt.check_low_precision) return;
  const Tensor y = fn(inputs);
  TG_CHECK(y.defined() && y.requires_grad() && y.shape() == v.shape(), MisuseError,
           "gradcheck: on the original (lower-precision) inputs the function returned {}, but "
           "on their float64 copies a tensor of shape {} that requires grad",
           y.defined() ? fmt::format("a tensor of shape {}", y.shape()) : "an undefined tensor",
           v.shape());
  std::vector<Tensor> wrt;
  for (size_t k : low) wrt.push_back(inputs[checked[k]]);
  const std::vector<Tensor> own = grad({y}, wrt, {v.to(y.dtype())}, false, true);
  for (size_t l = 0; l < low.size(); ++l) {
    const size_t i = checked[low[l]];
    const Tensor a64 = analytic64[low[l]].to(kFloat64).contiguous();
    const Tensor mine =
        own[l].defined() ? own[l].to(kFloat64).contiguous() : zeros(a64.shape(), kFloat64);
    double scale = 0;
    for (int64_t j = 0; j < a64.numel(); ++j)
      scale = std::max(scale, std::abs(a64.data<double>()[j]));
    const double tol = detail::low_precision_tolerance(inputs[i].dtype()) * scale;
    for (int64_t j = 0; j < a64.numel(); ++j) {
      GradcheckEntry e;
      e.input = i;
      e.element = j;
      e.analytic = mine.data<double>()[j];
      e.numeric = a64.data<double>()[j];
      e.error = std::abs(e.analytic - e.numeric);
      e.tolerance = tol;
      if (detail::passes(e)) continue;
      e.where = element_name(a64.shape(), j);
      ++r.low_precision_failed;
      failures.push_back(std::move(e));
    }
  }
}

void check_options(const GradcheckOptions& opt) {
  TG_CHECK(opt.eps > 0, ValueError, "gradcheck: eps must be positive, got {}", opt.eps);
  TG_CHECK(opt.atol >= 0 && opt.rtol >= 0, ValueError,
           "gradcheck: atol and rtol must be >= 0, got atol {} and rtol {}", opt.atol, opt.rtol);
  TG_CHECK(opt.max_elements_per_input > 0, ValueError,
           "gradcheck: max_elements_per_input must be positive, got {}",
           opt.max_elements_per_input);
  TG_CHECK(!opt.fast_mode || opt.directions > 0, ValueError,
           "gradcheck: fast_mode needs directions > 0, got {}", opt.directions);
  TG_CHECK(opt.max_listed >= 0, ValueError, "gradcheck: max_listed must be >= 0, got {}",
           opt.max_listed);
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  check_options(opt);
  // The inputs fn runs on for the check: the float64 inputs themselves, and a float64
  // copy of each lower-precision one that requires grad.
  std::vector<Tensor> probe = inputs;
  std::vector<size_t> checked;
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined() || !x.requires_grad()) continue;
    any = true;
    TG_CHECK(x.is_leaf(), MisuseError,
             "gradcheck: input {} is not a leaf; pass leaves (e.g. x.detach().requires_grad_())",
             i);
    if (x.numel() == 0) continue;
    if (x.dtype() != kFloat64) probe[i] = x.detach().to(kFloat64).requires_grad_();
    checked.push_back(i);
  }
  TG_CHECK(any, MisuseError, "gradcheck: no input requires grad, so there is nothing to check");
  TG_CHECK(!checked.empty(), ValueError,
           "gradcheck: every input that requires grad is empty (0 elements), so there is "
           "nothing to check");

  // Analytic: one backward with a random upstream gradient v.
  Generator gen(opt.seed);
  const Tensor y = fn(probe);
  TG_CHECK(y.defined(), MisuseError, "gradcheck: the function returned an undefined tensor");
  TG_CHECK(y.numel() > 0, ValueError,
           "gradcheck: the function returned an empty tensor of shape {}: with no output "
           "element there is nothing to compare, and any backward would pass",
           y.shape());
  TG_CHECK(y.requires_grad(), MisuseError,
           "gradcheck: the function's output (shape {}) does not require grad: is its op "
           "recorded?",
           y.shape());
  const Tensor v = randn(y.shape(), kFloat64, gen).to(y.dtype());
  std::vector<Tensor> wrt;
  for (size_t i : checked) wrt.push_back(probe[i]);
  const std::vector<Tensor> analytic = grad({y}, wrt, {v}, false, /*allow_unused=*/true);

  GradcheckResult r;
  std::vector<GradcheckEntry> failures;
  {
    NoGradGuard no_grad;
    const std::function<double()> F = [&] { return project(fn(probe), v); };
    const double f0 = F();
    for (size_t k = 0; k < checked.size(); ++k) {
      if (!analytic[k].defined()) {
        r.no_gradient.push_back(checked[k]);
        continue;
      }
      const Tensor a64 = analytic[k].to(kFloat64).contiguous();
      if (opt.fast_mode) {
        check_directions(F, f0, probe[checked[k]], a64, checked[k], opt, gen, failures, r);
      } else {
        check_elements(F, f0, probe[checked[k]], a64, checked[k], opt, gen, failures, r);
      }
    }
  }
  r.failed = static_cast<int64_t>(failures.size());
  r.worst = detail::worst_of(std::move(failures), opt.max_listed);

  std::vector<GradcheckEntry> low_failures;
  check_low_precision(fn, inputs, checked, analytic, v, opt, low_failures, r);
  r.low_precision_worst = detail::worst_of(std::move(low_failures), opt.max_listed);

  r.ok = r.failed == 0 && r.low_precision_failed == 0 && r.no_gradient.empty();
  r.message = detail::gradcheck_report(r, inputs, opt);
  return r;
}

}  // namespace tg
