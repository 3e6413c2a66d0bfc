// nn/optim.h — optimizers: SGD (momentum, Nesterov, weight decay), Adam and AdamW.
// Code: nn/optim.cpp (the base), nn/sgd.cpp, nn/adam.cpp (the fast Adam: nn/fast/adam.cpp).
// Tests: tests/nn/optim_test.cpp. Course: docs/course/14-optimizers.md.
//
// The fourth and fifth steps of a training step:
//
//   loss = ...; tg::backward(loss);   // grads accumulate into every parameter's .grad()
//   opt.step();                       // p <- p - lr * (some function of the grads so far)
//   opt.zero_grad();                  // forget this step's grads before the next backward
//
// Each optimizer applies exactly PyTorch 1.13's update (torch/optim/sgd.py, adam.py,
// adamw.py, single-tensor path), in the same order of operations and in the parameter's
// dtype: a float32 parameter is updated with float32 arithmetic and keeps float32 state, a
// float64 one with double arithmetic. PyTorch's CPU kernels fuse `a + alpha * b` into one
// fused multiply-add (one rounding); so do we, with std::fma, which is why 10 steps in
// float32 agree with PyTorch's to the last bit (tests/nn/optim_test.cpp). float16/bfloat16
// parameters are updated in float32 and rounded once per stored value (PyTorch would round every
// intermediate).
//
// State lives per parameter, in typed fields named as in PyTorch (SGDState, AdamState), and
// is created on the parameter's first step with a gradient, as in PyTorch. A parameter whose
// .grad() is undefined is skipped by step(), state and all. state_tensors() names the state
// like PyTorch's optimizer.state_dict():
//   "state.<i>.momentum_buffer"                         SGD with momentum
//   "state.<i>.exp_avg", "state.<i>.exp_avg_sq",
//   "state.<i>.step" (a float32 scalar, as PyTorch)     Adam, AdamW
// where <i> is the parameter's index in the list given to the constructor.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/ops.h"

namespace tg::nn {

/// SGD's state of one parameter (torch.optim.SGD's name).
struct SGDState {
  Tensor momentum_buffer;  ///< the velocity, once momentum != 0 (undefined before step 1)
};

/// Adam's and AdamW's state of one parameter (torch.optim.Adam's names).
struct AdamState {
  Tensor exp_avg;     ///< m: the running mean of the gradient
  Tensor exp_avg_sq;  ///< v: the running mean of its square
  Tensor step;        ///< t: the steps this parameter has taken, a float32 scalar as in PyTorch
};

/// The base of every optimizer (torch.optim.Optimizer, with one parameter group).
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// One update of every parameter that has a gradient; then step_count() grows by one.
  virtual void step() = 0;
  /// Forgets every parameter's gradient. With set_to_none (the default, as PyTorch 2.x)
  /// .grad() becomes undefined, so a parameter the next backward does not reach is
  /// skipped by step() and reported by nn::check_all_have_grad; otherwise grads are zeroed.
  void zero_grad(bool set_to_none = true);

  /// The learning rate the next step() uses (LR schedules set it before each step).
  double lr() const { return lr_; }
  /// ValueError unless lr >= 0.
  void set_lr(double lr);
  /// How many times step() has run (restored by load_state_tensors).
  int64_t step_count() const { return step_count_; }
  const std::vector<Tensor>& params() const { return params_; }
  /// "SGD", "Adam" or "AdamW": the name that starts this optimizer's error messages.
  std::string_view name() const { return name_; }

  /// One field of a parameter's state: its PyTorch name, and where the subclass keeps it.
  struct StateField {
    std::string_view name;
    Tensor* tensor;
  };

  /// The per-parameter state under PyTorch's names (see the file comment), sorted by
  /// parameter index, then in the order of the optimizer's state fields. The tensors are
  /// the live state: copy them before changing them (the checkpoint writer copies them out).
  std::vector<std::pair<std::string, Tensor>> state_tensors() const;
  /// Replaces all state by `named` (copies of it) and sets step_count(). Throws ValueError
  /// listing every problem: an unknown name, a parameter index out of range, a shape or
  /// dtype that does not fit, a parameter with only part of its state, a duplicate, or a
  /// negative step count. On error the optimizer is unchanged.
  void load_state_tensors(const std::vector<std::pair<std::string, Tensor>>& named,
                          int64_t step_count);
  /// The checks of load_state_tensors alone: throws what it would throw, changes nothing.
  void check_state_tensors(const std::vector<std::pair<std::string, Tensor>>& named,
                           int64_t step_count) const;

 protected:
  /// Checks that `params` is a non-empty list of distinct floating-point leaves that require
  /// grad (MisuseError or ValueError naming the parameter's index and shape).
  Optimizer(std::string_view name, std::vector<Tensor> params, double lr);

  /// The fields of parameter i's state, in a fixed order (the same names for every i); all
  /// undefined until the parameter's first step, all defined after it.
  virtual std::vector<StateField> state_fields(size_t i) = 0;
  /// Counts one step(): called by the subclasses at the end of step().
  void finish_step() { ++step_count_; }

 private:
  // The state `named` describes, one list per parameter in state_fields order (empty for a
  // parameter without state), or ValueError listing every problem.
  std::vector<std::vector<Tensor>> checked_state(
      const std::vector<std::pair<std::string, Tensor>>& named, int64_t step_count) const;

  std::string name_;
  std::vector<Tensor> params_;
  double lr_;
  int64_t step_count_ = 0;
};

/// Settings of SGD (torch.optim.SGD): `SGD sgd(params, {.lr = 0.1, .momentum = 0.9})`.
struct SGDOptions {
  double lr = 1e-3;  ///< PyTorch 2.x's default (1.13 made it a required argument)
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;  ///< L2: weight_decay * p is added to the gradient
  bool nesterov = false;      ///< needs momentum > 0 and dampening == 0
};

/// Stochastic gradient descent with optional momentum (torch.optim.SGD):
///   d = g + weight_decay * p
///   buf = d (first step), else buf = momentum * buf + (1 - dampening) * d
///   d = nesterov ? d + momentum * buf : buf        (when momentum != 0)
///   p = p - lr * d
class SGD : public Optimizer {
 public:
  /// ValueError for lr, momentum or weight_decay < 0, and for nesterov without momentum
  /// or with dampening.
  SGD(std::vector<Tensor> params, SGDOptions options = {});
  void step() override;
  /// Parameter i's state.
  const SGDState& state(size_t i) const { return state_.at(i); }

 private:
  std::vector<StateField> state_fields(size_t i) override;
  SGDOptions options_;
  std::vector<SGDState> state_;  // one per parameter
};

/// Settings of Adam (torch.optim.Adam).
struct AdamOptions {
  double lr = 1e-3;
  std::array<double, 2> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0.0;  ///< L2, added to the gradient (Adam's classic coupling)
};

/// Adam (torch.optim.Adam, amsgrad off), for the t-th step of a parameter:
///   g = g + weight_decay * p
///   m = beta1 * m + (1 - beta1) * g          v = beta2 * v + (1 - beta2) * g^2
///   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
class Adam : public Optimizer {
 public:
  /// ValueError for lr, eps or weight_decay < 0, or a beta outside [0, 1).
  Adam(std::vector<Tensor> params, AdamOptions options = {});
  void step() override;
  /// Parameter i's state.
  const AdamState& state(size_t i) const { return state_.at(i); }

 private:
  std::vector<StateField> state_fields(size_t i) override;
  AdamOptions options_;
  std::vector<AdamState> state_;  // one per parameter
};

/// Settings of AdamW (torch.optim.AdamW).
struct AdamWOptions {
  double lr = 1e-3;
  std::array<double, 2> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0.01;  ///< decoupled: p = p * (1 - lr * weight_decay) every step
};

/// AdamW (torch.optim.AdamW, amsgrad off): Adam whose weight decay shrinks the weights
/// directly instead of passing through the adaptive denominator:
///   p = p * (1 - lr * weight_decay), then Adam's update without the L2 term.
class AdamW : public Optimizer {
 public:
  /// ValueError for lr, eps or weight_decay < 0, or a beta outside [0, 1).
  AdamW(std::vector<Tensor> params, AdamWOptions options = {});
  void step() override;
  /// Parameter i's state.
  const AdamState& state(size_t i) const { return state_.at(i); }

 private:
  std::vector<StateField> state_fields(size_t i) override;
  AdamWOptions options_;
  std::vector<AdamState> state_;  // one per parameter
};

}  // namespace tg::nn
