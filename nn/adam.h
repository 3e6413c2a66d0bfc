// nn/adam.h — the Adam(W) update of one parameter, shared by its two kernels: the reference
// loop (nn/adam.cpp) and the fast one (nn/fast/adam.cpp), which run the same adam_element on
// every element and so give bit-identical results. Internal to the optimizers.
//
// adam_element is written as PyTorch 1.13's single-tensor loop (torch/optim/adam.py,
// adamw.py): the comment above each line quotes the PyTorch statement it reproduces;
// `a.add_(b, alpha=s)` is computed as std::fma(s, b, a) because PyTorch's CPU kernel fuses it
// the same way, and `a.addcmul_(b, c, value=s)` as std::fma(s * b, c, a).
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/compute.h"
#include "ops/kernels.h"

namespace tg::nn::detail {

using tg::detail::ComputeType;

/// The numbers of one Adam(W) step of one parameter, from its options and step count.
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

}  // namespace tg::nn::detail

namespace tg::kernels {

/// One Adam(W) step over the n elements of a parameter p, its gradient g and its state m
/// (exp_avg) and v (exp_avg_sq), all of the parameter's dtype T, updated in place.
template <class T>
using AdamUpdate = void(T* p, const T* g, T* m, T* v, int64_t n, const nn::detail::AdamStep& s);

extern KernelPair<AdamUpdate, float, double, Half, BFloat16> adam_update;

}  // namespace tg::kernels

namespace tg::nn::detail {
/// Adds the fast kernels of the nn layer (nn/fast/install.cpp, or nn/reference_only.cpp in a
/// tree without nn/fast/); returns whether there are any.
bool install_fast_kernels();
}  // namespace tg::nn::detail
