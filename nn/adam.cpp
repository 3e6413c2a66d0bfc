// nn/adam.cpp — Adam and AdamW: the reference update kernel, then the optimizers.
// Tests: tests/nn/optim_test.cpp. Course: docs/course/14-optimizers.md.
//
// The math of one step is adam_element (nn/adam.h), shared with the fast kernel
// (nn/fast/adam.cpp); the reference kernel is the plain loop over the elements.
#include "nn/adam.h"

#include <cmath>

#include "nn/optim.h"
#include "nn/update.h"

namespace tg::nn {
namespace {

using tg::detail::ComputeType;

// The reference kernel: one plain loop over the elements.
template <class T>
void adam_update(T* p, const T* g, T* m, T* v, int64_t n, const detail::AdamStep& s) {
  const detail::AdamConstants<ComputeType<T>> k(s);
  if (k.coupled) {
    for (int64_t i = 0; i < n; ++i) detail::adam_element<true>(p, g, m, v, i, k);
  } else {
    for (int64_t i = 0; i < n; ++i) detail::adam_element<false>(p, g, m, v, i, k);
  }
}

// One Adam or AdamW step over every parameter with a gradient; state per parameter is
// {exp_avg, exp_avg_sq, step}.
void adam_step(std::string_view opt, const std::vector<Tensor>& params,
               std::vector<AdamState>& state, double lr, std::array<double, 2> betas, double eps,
               double l2, double decoupled_wd) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    if (!p.grad().defined()) continue;  // PyTorch skips parameters without a gradient
    const Tensor g = detail::checked_grad(opt, i, p);
    AdamState& st = state[i];
    if (!st.step.defined()) {
      st = {zeros_like(p), zeros_like(p), scalar_tensor(0.0, kFloat32)};
    }
    // step_t += 1 (a float32 tensor in PyTorch 1.13; exact for any realistic count)
    Tensor& step_t = st.step;
    const double t = static_cast<double>(step_t.item<float>()) + 1.0;
    step_t.fill_(t);
    detail::AdamStep s{};
    s.beta1 = betas[0];
    s.beta2 = betas[1];
    s.eps = eps;
    s.l2 = l2;
    s.decay = 1.0 - lr * decoupled_wd;
    s.step_size = lr / (1.0 - std::pow(betas[0], t));
    s.bias_correction2_sqrt = std::sqrt(1.0 - std::pow(betas[1], t));
    detail::update_in_place(p, [&](const Tensor& w) {
      detail::visit_floating(p.dtype(), [&]<class T>() {
        kernels::adam_update.get<T>()(w.data<T>(), g.data<T>(), st.exp_avg.data<T>(),
                                      st.exp_avg_sq.data<T>(), p.numel(), s);
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

std::vector<Optimizer::StateField> adam_fields(AdamState& s) {
  return {{"exp_avg", &s.exp_avg}, {"exp_avg_sq", &s.exp_avg_sq}, {"step", &s.step}};
}

// nn/fast/install.cpp adds the fast Adam when the library starts (a tree without nn/fast/
// compiles nn/reference_only.cpp instead, which adds nothing).
[[maybe_unused]] const bool g_fast_installed = detail::install_fast_kernels();

}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Optimizer("Adam", std::move(params), options.lr),
      options_(options),
      state_(this->params().size()) {
  check_adam_options("Adam", options.lr, options.betas, options.eps, options.weight_decay);
}

std::vector<Optimizer::StateField> Adam::state_fields(size_t i) { return adam_fields(state_[i]); }

void Adam::step() {
  tg::detail::ProfileScope profile("adam", "step");
  adam_step(name(), params(), state_, lr(), options_.betas, options_.eps, options_.weight_decay,
            0.0);
  finish_step();
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Optimizer("AdamW", std::move(params), options.lr),
      options_(options),
      state_(this->params().size()) {
  check_adam_options("AdamW", options.lr, options.betas, options.eps, options.weight_decay);
}

std::vector<Optimizer::StateField> AdamW::state_fields(size_t i) { return adam_fields(state_[i]); }

void AdamW::step() {
  tg::detail::ProfileScope profile("adamw", "step");
  adam_step(name(), params(), state_, lr(), options_.betas, options_.eps, 0.0,
            options_.weight_decay);
  finish_step();
}

}  // namespace tg::nn

namespace tg {
constinit kernels::KernelPair<kernels::AdamUpdate, float, double, Half, BFloat16>
    kernels::adam_update{nn::adam_update<float>, nn::adam_update<double>, nn::adam_update<Half>,
                         nn::adam_update<BFloat16>};
}  // namespace tg
