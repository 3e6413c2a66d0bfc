// nn/grad_utils.cpp — norms over many tensors, accumulated in double.
#include "nn/grad_utils.h"

#include <fmt/ranges.h>

#include <cmath>

namespace tg::nn {
namespace {

// Calls fn(x) for every element of t (any floating dtype, any layout) as a double.
template <class Fn>
void for_each_value(const Tensor& t, Fn&& fn) {
  NoGradGuard no_grad;
  const Tensor c = t.detach().contiguous();
  visit_dtype(c.dtype(), [&]<class T>() {
    const T* p = c.data<T>();
    for (int64_t i = 0; i < c.numel(); ++i) fn(convert<double>(p[i]));
  });
}

// Multiplies every element of g by `factor` in place (rounded as PyTorch's mul_ by a scalar:
// the factor converted to the compute type first).
void scale_in_place(const Tensor& g, double factor) {
  NoGradGuard no_grad;
  const Tensor work = g.is_contiguous() ? g : g.detach().clone();
  visit_dtype(g.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, bool>) {
      tg::detail::raise<DTypeError>("clip_grad_norm: a gradient of dtype {}", g.dtype());
    } else {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const C f = static_cast<C>(factor);
      T* p = work.data<T>();
      for (int64_t i = 0; i < work.numel(); ++i) p[i] = convert<T>(convert<C>(p[i]) * f);
    }
  });
  if (work.impl() == g.impl()) {
    g.storage()->bump_version();
  } else {
    Tensor(g).copy_(work);  // a new handle to the same tensor: copy_ is not const
  }
}

double l2_norm(const Tensor& t) {
  double sum = 0.0;
  for_each_value(t, [&](double x) { sum += x * x; });
  return std::sqrt(sum);
}

}  // namespace

double global_grad_norm(const std::vector<Tensor>& params, double norm_type) {
  TG_CHECK(norm_type > 0, ValueError,
           "global_grad_norm: norm_type must be > 0 (or INFINITY), got {}", norm_type);
  double acc = 0.0;
  for (const Tensor& p : params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    if (std::isinf(norm_type)) {
      // std::max would drop a NaN; keep it, so that a NaN gradient shows in the norm.
      for_each_value(
          g, [&](double x) { acc = std::isnan(x) || std::abs(x) > acc ? std::abs(x) : acc; });
    } else if (norm_type == 2.0) {
      for_each_value(g, [&](double x) { acc += x * x; });
    } else {
      for_each_value(g, [&](double x) { acc += std::pow(std::abs(x), norm_type); });
    }
  }
  if (std::isinf(norm_type)) return acc;
  return norm_type == 2.0 ? std::sqrt(acc) : std::pow(acc, 1.0 / norm_type);
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm, double norm_type) {
  TG_CHECK(max_norm >= 0, ValueError, "clip_grad_norm: max_norm must be >= 0, got {}", max_norm);
  TG_CHECK(norm_type > 0, ValueError, "clip_grad_norm: norm_type must be > 0 (or INFINITY), got {}",
           norm_type);
  const double total = global_grad_norm(params, norm_type);
  if (!std::isfinite(total)) return total;
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1.0) {
    for (const Tensor& p : params) {
      if (p.grad().defined()) scale_in_place(p.grad(), coef);
    }
  }
  return total;
}

std::vector<UpdateRatio> update_ratios(const std::vector<std::pair<std::string, Tensor>>& before,
                                       const std::vector<std::pair<std::string, Tensor>>& after) {
  TG_CHECK(before.size() == after.size(), ValueError,
           "update_ratios: {} tensors before but {} after", before.size(), after.size());
  std::vector<UpdateRatio> out;
  for (size_t i = 0; i < before.size(); ++i) {
    const auto& [name, w0] = before[i];
    const auto& [name1, w1] = after[i];
    TG_CHECK(name == name1 && w0.shape() == w1.shape(), ValueError,
             "update_ratios: entry {} is '{}' of shape {} before but '{}' of shape {} after", i,
             name, w0.shape(), name1, w1.shape());
    double diff = 0.0;
    {
      NoGradGuard no_grad;
      const Tensor d = sub(w1.detach().to(kFloat64), w0.detach().to(kFloat64));
      diff = l2_norm(d);
    }
    const double weight = l2_norm(w0);
    double ratio = 0.0;
    if (weight > 0) {
      ratio = diff / weight;
    } else if (diff > 0) {
      ratio = INFINITY;
    }
    out.push_back({name, diff, weight, ratio});
  }
  return out;
}

UpdateTracker::UpdateTracker(std::vector<std::pair<std::string, Tensor>> named)
    : live_(std::move(named)) {
  snapshot();
}

void UpdateTracker::snapshot() {
  NoGradGuard no_grad;
  before_.clear();
  for (const auto& [name, t] : live_) before_.emplace_back(name, t.detach().clone());
}

std::vector<UpdateRatio> UpdateTracker::ratios() const { return update_ratios(before_, live_); }

std::vector<std::string> params_without_grad(
    const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& [name, p] : named) {
    if (p.requires_grad() && !p.grad().defined()) out.push_back(name);
  }
  return out;
}

void check_all_have_grad(const std::vector<std::pair<std::string, Tensor>>& named) {
  const std::vector<std::string> missing = params_without_grad(named);
  TG_CHECK(missing.empty(), MisuseError,
           "check_all_have_grad: {} of {} parameters received no gradient: {}; they are not "
           "connected to the loss (a layer not used in forward, a detach() on the way, or a "
           "tensor that is not the registered parameter), so the optimizer never updates them",
           missing.size(), named.size(), fmt::join(missing, ", "));
}

}  // namespace tg::nn
