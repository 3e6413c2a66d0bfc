// nn/sgd.cpp — SGD, written as PyTorch 1.13's single-tensor loop (torch/optim/sgd.py).
// Tests: tests/nn/optim_test.cpp. Course: docs/course/14-optimizers.md.
//
// The update is a plain loop over the contiguous elements of one parameter, its gradient and
// its momentum buffer. The comment above each line quotes the PyTorch statement it
// reproduces; `a.add_(b, alpha=s)` is computed as std::fma(s, b, a) because PyTorch's CPU
// kernel fuses it the same way.
#include <cmath>

#include "nn/optim.h"
#include "nn/update.h"
#include "ops/compute.h"

namespace tg::nn {
namespace {

using tg::detail::ComputeType;

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

}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer("SGD", std::move(params), options.lr),
      options_(options),
      state_(this->params().size()) {
  TG_CHECK(options.momentum >= 0, ValueError, "SGD: momentum must be >= 0, got {}",
           options.momentum);
  TG_CHECK(options.weight_decay >= 0, ValueError, "SGD: weight_decay must be >= 0, got {}",
           options.weight_decay);
  TG_CHECK(!options.nesterov || (options.momentum > 0 && options.dampening == 0), ValueError,
           "SGD: nesterov needs momentum > 0 and dampening == 0, got momentum {} and "
           "dampening {}",
           options.momentum, options.dampening);
}

std::vector<Optimizer::StateField> SGD::state_fields(size_t i) {
  if (options_.momentum == 0) return {};  // plain SGD keeps no state
  return {{"momentum_buffer", &state_[i].momentum_buffer}};
}

void SGD::step() {
  tg::detail::ProfileScope profile("sgd", "step");
  NoGradGuard no_grad;
  const std::vector<Tensor>& ps = params();
  for (size_t i = 0; i < ps.size(); ++i) {
    const Tensor& p = ps[i];
    if (!p.grad().defined()) continue;  // PyTorch skips parameters without a gradient
    const Tensor g = detail::checked_grad(name(), i, p);
    bool first = false;
    Tensor& buf = state_[i].momentum_buffer;
    if (options_.momentum != 0) {
      first = !buf.defined();
      if (first) buf = empty_like(p);
    }
    detail::update_in_place(p, [&](const Tensor& w) {
      detail::visit_floating(p.dtype(), [&]<class T>() {
        sgd_kernel(w.data<T>(), g.data<T>(), buf.defined() ? buf.data<T>() : nullptr, first,
                   p.numel(), options_, lr());
      });
    });
  }
  finish_step();
}

}  // namespace tg::nn
