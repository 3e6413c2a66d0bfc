// core/autocast.h — mixed precision the way torch.autocast does it: a scoped guard under
// which each op decides, by a rule it declares, which dtype its inputs are cast to.
//
//   tg::AutocastGuard autocast(tg::kBFloat16);   // like `with torch.autocast("cpu", bf16):`
//   Tensor logits = model.forward(ids);          // the linears run in bfloat16
//   Tensor loss = tg::cross_entropy(logits, y);  // cross-entropy runs in float32
//
// The parameters stay float32 (the "master weights"); nothing is converted in place. An op
// under the guard casts its floating inputs with Tensor::to before it runs, and each cast is
// an op on the tape like any other, so backward mirrors the forward without knowing about
// autocast: the gradient of a bfloat16 copy of a float32 weight is cast back to float32 by
// the cast's own backward and lands in the weight's float32 .grad.
//
// The rules (an op declares one as `static constexpr AutocastRule kAutocast`):
//   kLowPrecision  matmul, linear, attention: the products that dominate the time and are
//                  accurate enough in bfloat16/float16 (each product of two bfloat16 values
//                  is exact in float32, and the kernels sum in float32).
//   kInFloat32     cross_entropy, mse_loss: losses, whose sum over a batch must not be
//                  rounded to 8 bits. (softmax, log_softmax, the norms and the reductions
//                  need no rule: every tapegrad kernel widens half inputs to float32,
//                  computes, and rounds once, so they already run in float32 inside.)
//   kPromote       add, sub, mul, div, where, cat, stack, the norms: inputs of different
//                  floating dtypes are cast to the widest, as PyTorch's type promotion does
//                  (a float32 residual plus a bfloat16 branch is float32). Outside autocast
//                  tapegrad refuses mixed dtypes instead of promoting silently.
// float64 inputs are never cast (torch.autocast leaves them alone too), nor are integer or
// bool ones. Ops without a rule run in whatever dtype their inputs have.
//
// Within one guard, the bfloat16 copy of a leaf that requires grad (a weight) is made once
// and reused (the weight cache): a weight used twice is converted once, and its cast is one
// node on the tape whose backward gets the sum of both uses' gradients. The cache is
// emptied when the outermost guard ends, so a guard per step sees each step's new weights.
//
// Backward always runs with autocast off: each backward computes in the dtypes its forward
// saved. Tests: tests/core/autocast_test.cpp, and the "autocast" fixtures that hold each rule
// to torch.autocast (tests/reference/). Course: docs/course/20-mixed-precision.md.
#pragma once

#include <span>

#include "core/dtype.h"
#include "core/tensor.h"

namespace tg {

/// How an op's floating inputs are cast under an AutocastGuard (see the file comment).
enum class AutocastRule { kLowPrecision, kInFloat32, kPromote };
const char* autocast_rule_name(AutocastRule rule);

/// Whether an AutocastGuard is active on this thread.
bool autocast_enabled();
/// The low-precision dtype of the innermost active guard (kBFloat16 or kFloat16).
DType autocast_dtype();

/// While alive, ops with an autocast rule cast their inputs by it (thread-local, nestable:
/// an inner guard with enabled = false turns autocast off for its scope, like
/// `torch.autocast(..., enabled=False)`). dtype must be kBFloat16 or kFloat16.
class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool previous_enabled_;
  DType previous_dtype_;
};

namespace detail {
/// The dtype an op of rule `rule` casts its floating inputs to, given their dtypes (float64
/// ones excluded by the caller's rule check below).
DType autocast_target(AutocastRule rule, std::span<const DType> floating_inputs);
/// `t` cast to `target` if the autocast rules say it is cast (defined, floating, not
/// float64, not already `target`), through the weight cache for leaves that require grad;
/// otherwise `t` itself. Recorded on the tape like any Tensor::to.
Tensor autocast_input(const Tensor& t, DType target, Here where);
}  // namespace detail

}  // namespace tg
