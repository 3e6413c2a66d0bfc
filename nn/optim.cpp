// nn/optim.cpp — the Optimizer base: parameters, learning rate, zero_grad, and the state
// under PyTorch's names (the updates themselves: nn/sgd.cpp, nn/adam.cpp).
#include "nn/optim.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

namespace tg::nn {
namespace {

// "state.<i>.<key>" -> (i, key); false for any other form.
bool parse_state_name(const std::string& name, size_t* index, std::string* key) {
  constexpr std::string_view kPrefix = "state.";
  if (!name.starts_with(kPrefix)) return false;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  const auto [after, ec] = std::from_chars(begin, end, *index);
  if (ec != std::errc() || after == begin || after == end || *after != '.') return false;
  *key = std::string(after + 1, end);
  return !key->empty();
}

}  // namespace

Optimizer::Optimizer(std::string_view name, std::vector<Tensor> params, double lr)
    : name_(name), params_(std::move(params)), lr_(0.0) {
  TG_CHECK(!params_.empty(), ValueError, "{}: got an empty parameter list; pass model.parameters()",
           name_);
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    TG_CHECK(p.defined(), MisuseError, "{}: parameter {} is an undefined tensor", name_, i);
    TG_CHECK(is_floating_point(p.dtype()), DTypeError,
             "{}: parameter {} (shape {}) has dtype {}; only floating-point tensors can be "
             "optimized",
             name_, i, p.shape(), p.dtype());
    TG_CHECK(p.requires_grad(), MisuseError,
             "{}: parameter {} (shape {}) does not require grad; call .requires_grad_() on it "
             "or leave it out",
             name_, i, p.shape());
    TG_CHECK(p.is_leaf(), MisuseError,
             "{}: parameter {} (shape {}) is not a leaf (a recorded op made it), so backward "
             "never fills its .grad(); optimize the leaf it was computed from",
             name_, i, p.shape());
    for (size_t j = 0; j < i; ++j) {
      TG_CHECK(params_[j].impl() != p.impl(), ValueError,
               "{}: parameters {} and {} (shape {}) are the same tensor; list each once", name_, j,
               i, p.shape());
    }
  }
  set_lr(lr);
}

void Optimizer::set_lr(double lr) {
  TG_CHECK(lr >= 0, ValueError, "{}: learning rate must be >= 0, got {}", name_, lr);
  lr_ = lr;
}

void Optimizer::zero_grad(bool set_to_none) {
  tg::detail::ProfileScope profile("optimizer", "zero_grad");
  NoGradGuard no_grad;
  for (Tensor& p : params_) {
    if (set_to_none) {
      p.set_grad(Tensor());
    } else if (p.grad().defined()) {
      p.grad().fill_(0.0);
    }
  }
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> named;
  for (size_t i = 0; i < params_.size(); ++i) {
    // state_fields only hands out where the state lives; nothing here changes it.
    for (const StateField& f : const_cast<Optimizer*>(this)->state_fields(i)) {
      if (f.tensor->defined()) named.emplace_back(fmt::format("state.{}.{}", i, f.name), *f.tensor);
    }
  }
  return named;
}

std::vector<std::vector<Tensor>> Optimizer::checked_state(
    const std::vector<std::pair<std::string, Tensor>>& named, int64_t step_count) const {
  std::vector<std::string> keys;
  // state_fields only hands out where the state lives; nothing here changes it.
  for (const StateField& f : const_cast<Optimizer*>(this)->state_fields(0)) {
    keys.emplace_back(f.name);
  }
  std::vector<std::string> problems;
  std::vector<std::vector<Tensor>> next(params_.size());
  if (step_count < 0) problems.push_back(fmt::format("step count {} is negative", step_count));
  for (const auto& [name, t] : named) {
    size_t i = 0;
    std::string key;
    if (!parse_state_name(name, &i, &key)) {
      problems.push_back(fmt::format("'{}' is not of the form state.<index>.<name>", name));
      continue;
    }
    if (i >= params_.size()) {
      problems.push_back(
          fmt::format("'{}': there is no parameter {} (there are {})", name, i, params_.size()));
      continue;
    }
    const auto k = static_cast<size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
    if (k == keys.size()) {
      problems.push_back(fmt::format("'{}': {} keeps no state named '{}' (its state: {})", name,
                                     name_, key, fmt::join(keys, ", ")));
      continue;
    }
    if (!t.defined()) {
      problems.push_back(fmt::format("'{}' is an undefined tensor", name));
      continue;
    }
    // "step" is a float32 scalar, as in PyTorch 1.13; the rest is shaped like the parameter.
    const Shape want_shape = key == "step" ? Shape{} : params_[i].shape();
    const DType want_dtype = key == "step" ? kFloat32 : params_[i].dtype();
    if (t.shape() != want_shape || t.dtype() != want_dtype) {
      problems.push_back(
          fmt::format("'{}' has shape {} and dtype {}, expected shape {} and "
                      "dtype {}",
                      name, t.shape(), t.dtype(), want_shape, want_dtype));
      continue;
    }
    if (next[i].empty()) next[i].resize(keys.size());
    if (next[i][k].defined()) {
      problems.push_back(fmt::format("'{}' appears twice", name));
      continue;
    }
    next[i][k] = t;
  }
  for (size_t i = 0; i < next.size(); ++i) {
    for (size_t k = 0; k < next[i].size(); ++k) {
      if (!next[i][k].defined()) {
        problems.push_back(
            fmt::format("parameter {} has part of its state but no 'state.{}.{}'", i, i, keys[k]));
      }
    }
  }
  TG_CHECK(problems.empty(), ValueError, "{}.load_state_tensors: {} problem(s): {}", name_,
           problems.size(), fmt::join(problems, "; "));
  return next;
}

void Optimizer::check_state_tensors(const std::vector<std::pair<std::string, Tensor>>& named,
                                    int64_t step_count) const {
  checked_state(named, step_count);
}

void Optimizer::load_state_tensors(const std::vector<std::pair<std::string, Tensor>>& named,
                                   int64_t step_count) {
  const std::vector<std::vector<Tensor>> next = checked_state(named, step_count);
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::vector<StateField> fields = state_fields(i);
    for (size_t k = 0; k < fields.size(); ++k) {
      *fields[k].tensor = next[i].empty() ? Tensor() : next[i][k].detach().clone();
    }
  }
  step_count_ = step_count;
}

}  // namespace tg::nn
