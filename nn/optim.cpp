// nn/optim.cpp — SGD, Adam and AdamW, written as PyTorch 1.13's single-tensor loops.
//
// Every update is a plain loop over the contiguous elements of one parameter, its gradient
// and its state. The comment above each line quotes the PyTorch statement it reproduces;
// `a.add_(b, alpha=s)` is computed as std::fma(s, b, a) because PyTorch's CPU kernel fuses
// it the same way, and `a.addcmul_(b, c, value=s)` as std::fma(s * b, c, a).
#include "nn/optim.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/parallel.h"
#include "ops/elementwise.h"
#include "ops/reference_kernels.h"
#include "ops/vectorize.h"

namespace tg::nn {
namespace {

using detail::ComputeType;

// Calls fn.template operator()<T>() for the four floating-point dtypes only.
template <class Fn>
void visit_floating(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    case DType::Float16: return fn.template operator()<Half>();
    case DType::BFloat16: return fn.template operator()<BFloat16>();
    default: detail::raise<DTypeError>("optimizer: dtype {} is not floating point", dtype);
  }
}

// Runs `update(work)` on contiguous memory holding parameter p's values: p itself when it is
// contiguous, otherwise a contiguous copy that is written back. Either way the storage's
// version is bumped, so a backward that saved p before this step will refuse to run.
template <class Fn>
void update_in_place(const Tensor& p, Fn&& update) {
  if (p.is_contiguous()) {
    update(p);
    p.storage()->bump_version();
  } else {
    const Tensor work = p.detach().clone();
    update(work);
    Tensor(p).copy_(work);  // bumps the version; allowed because the caller holds a NoGradGuard
  }
}

// The gradient of parameter i, checked against it, as contiguous memory.
Tensor checked_grad(std::string_view opt, size_t i, const Tensor& p) {
  const Tensor g = p.grad();
  TG_CHECK(g.shape() == p.shape() && g.dtype() == p.dtype(), ShapeError,
           "{}.step: parameter {} has shape {} and dtype {} but its gradient has shape {} and "
           "dtype {}",
           opt, i, p.shape(), p.dtype(), g.shape(), g.dtype());
  return g.detach().contiguous();
}

// ------------------------------------------------------------------------------- SGD
template <class T>
void sgd_kernel(T* p, const T* g, T* buf, bool first, int64_t n, const SGDOptions& o, double lr) {
  // exercise sgd.step: begin
  using C = ComputeType<T>;
  const C wd = static_cast<C>(o.weight_decay);
  const C momentum = static_cast<C>(o.momentum);
  const C keep = static_cast<C>(1.0 - o.dampening);
  const C neg_lr = static_cast<C>(-lr);
  for (int64_t i = 0; i < n; ++i) {
    const C w = convert<C>(p[i]);
    C d = convert<C>(g[i]);
    // d_p = d_p.add(param, alpha=weight_decay)
    if (o.weight_decay != 0) d = std::fma(wd, w, d);
    if (buf != nullptr) {
      // buf = clone(d_p) on the first step, else buf.mul_(momentum).add_(d_p, alpha=1-dampening)
      buf[i] = convert<T>(first ? d : std::fma(keep, d, convert<C>(buf[i]) * momentum));
      const C b = convert<C>(buf[i]);
      // d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
      d = o.nesterov ? std::fma(momentum, b, d) : b;
    }
    // param.add_(d_p, alpha=-lr)
    p[i] = convert<T>(std::fma(neg_lr, d, w));
  }
  // exercise sgd.step: end
}

// ------------------------------------------------------------------------------- Adam(W)
struct AdamStep {
  double beta1, beta2, eps;
  double l2;                     // Adam's weight decay, added to the gradient (0 for AdamW)
  double decay;                  // AdamW's factor 1 - lr * weight_decay (1 for Adam)
  double step_size;              // lr / (1 - beta1^t)
  double bias_correction2_sqrt;  // sqrt(1 - beta2^t)
};

/// The constants of one Adam(W) step in the compute type C, converted once.
template <class C>
struct AdamConstants {
  C beta1, one_minus_beta1, beta2, one_minus_beta2, l2, decay, eps, neg_step_size, bc2_sqrt;
  bool coupled;  // Adam's L2 term is on (AdamW's decay is 1 when off: w * 1 is exactly w)

  explicit AdamConstants(const AdamStep& s)
      : beta1(static_cast<C>(s.beta1)),
        one_minus_beta1(static_cast<C>(1.0 - s.beta1)),
        beta2(static_cast<C>(s.beta2)),
        one_minus_beta2(static_cast<C>(1.0 - s.beta2)),
        l2(static_cast<C>(s.l2)),
        decay(static_cast<C>(s.decay)),
        eps(static_cast<C>(s.eps)),
        neg_step_size(static_cast<C>(-s.step_size)),
        bc2_sqrt(static_cast<C>(s.bias_correction2_sqrt)),
        coupled(s.l2 != 0) {}
};

// Element i of one Adam(W) update: the whole step in one pass over p, g, m, v. kCoupled is
// k.coupled as a template argument, so the loops over elements have no branch in them.
template <bool kCoupled, class T, class C>
inline void adam_element(T* p, const T* g, T* m, T* v, int64_t i, const AdamConstants<C>& k) {
  // exercise adamw.step: begin
  C w = convert<C>(p[i]);
  C grad = convert<C>(g[i]);
  // AdamW: param.mul_(1 - lr * weight_decay)
  w = convert<C>(convert<T>(w * k.decay));
  // Adam: grad = grad.add(param, alpha=weight_decay)
  if constexpr (kCoupled) grad = std::fma(k.l2, w, grad);
  // exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
  const T m_new = convert<T>(std::fma(k.one_minus_beta1, grad, convert<C>(m[i]) * k.beta1));
  // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
  const T v_new = convert<T>(std::fma(k.one_minus_beta2 * grad, grad, convert<C>(v[i]) * k.beta2));
  m[i] = m_new;
  v[i] = v_new;
  // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
  const C denom = std::sqrt(convert<C>(v_new)) / k.bc2_sqrt + k.eps;
  // param.addcdiv_(exp_avg, denom, value=-step_size)
  p[i] = convert<T>(w + k.neg_step_size * convert<C>(m_new) / denom);
  // exercise adamw.step: end
}

// The reference: one plain loop over the elements.
template <class T>
void adam_kernel(T* p, const T* g, T* m, T* v, int64_t n, const AdamStep& s) {
  const AdamConstants<ComputeType<T>> k(s);
  if (k.coupled) {
    for (int64_t i = 0; i < n; ++i) adam_element<true>(p, g, m, v, i, k);
  } else {
    for (int64_t i = 0; i < n; ++i) adam_element<false>(p, g, m, v, i, k);
  }
}

// The fast kernel: the same adam_element on every element, so the result is bit-identical
// to the reference (vector sqrt, division and fma round exactly like the scalar ones);
// elements are independent, so threads split them into contiguous ranges. Two things make
// the loop vectorise (ops/vectorize.h): the shape of simd_for over __restrict arrays, and
// -fno-math-errno for this file (nn/CMakeLists.txt) — std::sqrt must otherwise set errno
// for a negative argument, a branch that keeps every element scalar, and a scalar sqrt and
// division per element cost more than moving the element's 16 bytes through the caches.
template <bool kCoupled, class T>
[[gnu::noinline]] void adam_span(T* __restrict p, const T* __restrict g, T* __restrict m,
                                 T* __restrict v, int64_t n,
                                 const AdamConstants<ComputeType<T>> k) {
  // k by value: a local copy the stores to p, m, v cannot alias, so its loads leave the loop.
  detail::simd_for(n, [&](int64_t i) { adam_element<kCoupled>(p, g, m, v, i, k); });
}

template <class T>
void adam_kernel_fast(T* p, const T* g, T* m, T* v, int64_t n, const AdamStep& s) {
  const AdamConstants<ComputeType<T>> k(s);
  // ~16k elements is ~10 microseconds of the vector loop: below that, one thread.
  parallel_for(n, 16384, [&](int64_t begin, int64_t end) {
    if (k.coupled) adam_span<true>(p + begin, g + begin, m + begin, v + begin, end - begin, k);
    else adam_span<false>(p + begin, g + begin, m + begin, v + begin, end - begin, k);
  });
}

// One Adam or AdamW step over every parameter with a gradient; state per parameter is
// {exp_avg, exp_avg_sq, step}.
void adam_step(std::string_view opt, const std::vector<Tensor>& params,
               std::vector<std::vector<Tensor>>& state, double lr, std::array<double, 2> betas,
               double eps, double l2, double decoupled_wd) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    if (!p.grad().defined()) continue;  // PyTorch skips parameters without a gradient
    const Tensor g = checked_grad(opt, i, p);
    if (state[i].empty()) {
      state[i] = {zeros_like(p), zeros_like(p), scalar_tensor(0.0, kFloat32)};
    }
    // step_t += 1 (a float32 tensor in PyTorch 1.13; exact for any realistic count)
    Tensor& step_t = state[i][2];
    const double t = static_cast<double>(step_t.item<float>()) + 1.0;
    step_t.fill_(t);
    AdamStep s{};
    s.beta1 = betas[0];
    s.beta2 = betas[1];
    s.eps = eps;
    s.l2 = l2;
    s.decay = 1.0 - lr * decoupled_wd;
    s.step_size = lr / (1.0 - std::pow(betas[0], t));
    s.bias_correction2_sqrt = std::sqrt(1.0 - std::pow(betas[1], t));
    update_in_place(p, [&](const Tensor& w) {
      visit_floating(p.dtype(), [&]<class T>() {
        auto kernel = reference_kernels() ? adam_kernel<T> : adam_kernel_fast<T>;
        kernel(w.data<T>(), g.data<T>(), state[i][0].data<T>(), state[i][1].data<T>(), p.numel(),
               s);
      });
    });
  }
}

void check_adam_options(std::string_view opt, double lr, std::array<double, 2> betas, double eps,
                        double weight_decay) {
  TG_CHECK(lr >= 0, ValueError, "{}: learning rate must be >= 0, got {}", opt, lr);
  TG_CHECK(eps >= 0, ValueError, "{}: eps must be >= 0, got {}", opt, eps);
  for (size_t k = 0; k < 2; ++k) {
    TG_CHECK(betas[k] >= 0 && betas[k] < 1, ValueError, "{}: betas[{}] must be in [0, 1), got {}",
             opt, k, betas[k]);
  }
  TG_CHECK(weight_decay >= 0, ValueError, "{}: weight_decay must be >= 0, got {}", opt,
           weight_decay);
}

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

// ------------------------------------------------------------------------------- Optimizer
Optimizer::Optimizer(std::string_view name, std::vector<Tensor> params, double lr)
    : name_(name), params_(std::move(params)), lr_(0.0), state_(params_.size()) {
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
  const std::vector<std::string> keys = state_names();
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < state_.size(); ++i) {
    for (size_t k = 0; k < state_[i].size(); ++k) {
      out.emplace_back(fmt::format("state.{}.{}", i, keys[k]), state_[i][k]);
    }
  }
  return out;
}

void Optimizer::load_state_tensors(const std::vector<std::pair<std::string, Tensor>>& named,
                                   int64_t step_count) {
  const std::vector<std::string> keys = state_names();
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
    next[i][k] = t.detach().clone();
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
  state_ = std::move(next);
  step_count_ = step_count;
}

// ------------------------------------------------------------------------------- SGD
SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer("SGD", std::move(params), options.lr), options_(options) {
  TG_CHECK(options.momentum >= 0, ValueError, "SGD: momentum must be >= 0, got {}",
           options.momentum);
  TG_CHECK(options.weight_decay >= 0, ValueError, "SGD: weight_decay must be >= 0, got {}",
           options.weight_decay);
  TG_CHECK(!options.nesterov || (options.momentum > 0 && options.dampening == 0), ValueError,
           "SGD: nesterov needs momentum > 0 and dampening == 0, got momentum {} and "
           "dampening {}",
           options.momentum, options.dampening);
}

std::vector<std::string> SGD::state_names() const {
  if (options_.momentum == 0) return {};
  return {"momentum_buffer"};
}

void SGD::step() {
  NoGradGuard no_grad;
  const std::vector<Tensor>& ps = params();
  for (size_t i = 0; i < ps.size(); ++i) {
    const Tensor& p = ps[i];
    if (!p.grad().defined()) continue;  // PyTorch skips parameters without a gradient
    const Tensor g = checked_grad(name(), i, p);
    bool first = false;
    Tensor buf;
    if (options_.momentum != 0) {
      first = state()[i].empty();
      if (first) state()[i] = {empty_like(p)};
      buf = state()[i][0];
    }
    update_in_place(p, [&](const Tensor& w) {
      visit_floating(p.dtype(), [&]<class T>() {
        sgd_kernel(w.data<T>(), g.data<T>(), buf.defined() ? buf.data<T>() : nullptr, first,
                   p.numel(), options_, lr());
      });
    });
  }
  finish_step();
}

// ------------------------------------------------------------------------------- Adam, AdamW
Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Optimizer("Adam", std::move(params), options.lr), options_(options) {
  check_adam_options("Adam", options.lr, options.betas, options.eps, options.weight_decay);
}

std::vector<std::string> Adam::state_names() const { return {"exp_avg", "exp_avg_sq", "step"}; }

void Adam::step() {
  adam_step(name(), params(), state(), lr(), options_.betas, options_.eps, options_.weight_decay,
            0.0);
  finish_step();
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Optimizer("AdamW", std::move(params), options.lr), options_(options) {
  check_adam_options("AdamW", options.lr, options.betas, options.eps, options.weight_decay);
}

std::vector<std::string> AdamW::state_names() const { return {"exp_avg", "exp_avg_sq", "step"}; }

void AdamW::step() {
  adam_step(name(), params(), state(), lr(), options_.betas, options_.eps, 0.0,
            options_.weight_decay);
  finish_step();
}

}  // namespace tg::nn
