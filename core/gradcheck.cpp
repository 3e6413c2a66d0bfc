// core/gradcheck.cpp — finite-difference gradient checks.
#include "core/gradcheck.h"

#include <cmath>

#include "core/autograd.h"
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

std::string index_of(const Shape& shape, int64_t flat) {
  DimVec idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("{}", idx);
}

/// The slope of F at x_j by finite differences, where at(h) is F with x_j moved by h.
/// Two points: (F(x + e) - F(x - e)) / 2e, error O(e^2) (the e^2 terms of the two Taylor
/// series cancel). Four points: (-F(x + 2e) + 8 F(x + e) - 8 F(x - e) + F(x - 2e)) / 12e,
/// error O(e^4): the combination that also cancels the e^3 terms.
template <class At>
double finite_difference(At&& at, double e, bool four_point) {
  // exercise gradcheck.finite_difference: begin
  if (four_point) return (-at(2 * e) + 8 * at(e) - 8 * at(-e) + at(-2 * e)) / (12 * e);
  return (at(e) - at(-e)) / (2 * e);
  // exercise gradcheck.finite_difference: end
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<size_t> checked;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    TG_CHECK(inputs[i].dtype() == kFloat64, DTypeError,
             "gradcheck: input {} requires grad but has dtype {}; finite differences need float64 "
             "(convert with .to(tg::kFloat64))",
             i, inputs[i].dtype());
    TG_CHECK(inputs[i].is_leaf(), MisuseError,
             "gradcheck: input {} is not a leaf; pass leaves (e.g. x.detach().requires_grad_())",
             i);
    checked.push_back(i);
  }
  TG_CHECK(!checked.empty(), MisuseError,
           "gradcheck: no input requires grad, so there is nothing to check");
  TG_CHECK(opt.eps > 0, ValueError, "gradcheck: eps must be positive, got {}", opt.eps);

  // Analytic: one backward with a random upstream gradient v.
  Generator gen(opt.seed);
  const Tensor y = fn(inputs);
  TG_CHECK(y.defined() && y.requires_grad(), MisuseError,
           "gradcheck: the function's output does not require grad: is its op recorded?");
  const Tensor v = randn(y.shape(), kFloat64, gen).to(y.dtype());
  std::vector<Tensor> wrt;
  for (size_t i : checked) wrt.push_back(inputs[i]);
  const std::vector<Tensor> analytic = grad({y}, wrt, {v}, false, /*allow_unused=*/true);

  NoGradGuard no_grad;
  auto F = [&] { return project(fn(inputs), v); };
  for (size_t k = 0; k < checked.size(); ++k) {
    const size_t i = checked[k];
    const Tensor& x = inputs[i];
    if (!analytic[k].defined()) {
      return {false, fmt::format("gradcheck: input {} (shape {}) got no gradient: the backward "
                                 "left its slot empty, or the output does not depend on it",
                                 i, x.shape())};
    }
    const Tensor a64 = analytic[k].to(kFloat64).contiguous();
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
      auto at = [&](double h) {
        xj = saved + h;
        return F();
      };
      const double numeric = finite_difference(at, opt.eps, opt.four_point);
      xj = saved;
      const double a = a64.data<double>()[j];
      const double tol = opt.atol + opt.rtol * std::abs(numeric);
      if (!(std::abs(a - numeric) <= tol)) {
        return {
            false,
            fmt::format("gradcheck: input {} (shape {}), element {} (index {}): analytic {:.10g} "
                        "vs numeric {:.10g}; |difference| {:.3g} exceeds atol {} + rtol {} * "
                        "|numeric| = {:.3g}",
                        i, x.shape(), j, index_of(x.shape(), j), a, numeric, std::abs(a - numeric),
                        opt.atol, opt.rtol, tol)};
      }
    }
  }
  return {};
}

}  // namespace tg
