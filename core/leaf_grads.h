// core/leaf_grads.h — where gradients end (internal to core/engine.cpp and core/autograd.cpp):
// adding one gradient into another, and letting a backward add straight into a leaf's
// existing .grad (Context::grad_buffer).
#pragma once

#include <unordered_map>
#include <vector>

#include "core/autograd.h"

namespace tg::detail {

// Whether any leaf ever got a post-accumulate hook (Tensor::register_post_accumulate_grad_hook).
// Until one does, backward skips the walk that finds when each leaf's gradient is complete.
void note_post_accumulate_hook();
bool post_accumulate_hooks_registered();

// Context::grad_buffer's engine side: lets a backward add an input's gradient straight into
// that leaf's existing .grad, when that is all the engine would do with the gradient anyway:
//   - the pass fills .grad (not tg::grad's captures) and anomaly mode is off (it must see
//     every gradient on its own);
//   - the input is a leaf without hooks of either kind, reached by exactly one edge of the whole
//   graph (or
//     as a root), so no other gradient is summed with this one before it reaches .grad;
//   - its .grad exists, is contiguous, and shares no memory with the gradients the backward
//     reads (Context::grad_buffer checks the saved tensors).
// A backward that took the offer returns the .grad itself, which take_delivered recognises.
class LeafGradDestinations final : public GradDestinations {
 public:
  LeafGradDestinations(const std::vector<Tensor>& roots, bool enabled)
      : roots_(roots), enabled_(enabled) {}

  /// Around one backward call: the node, and the gradients its backward reads.
  void begin(const Node& node, const std::vector<Tensor>& grads);
  Tensor existing_grad(size_t input) override;
  /// How many edges (and roots) of the graph lead to `leaf`: counted by one walk over the
  /// whole graph (a stack, never recursion), the first time someone asks. Nodes that
  /// already ran keep their edges (release() frees saved tensors only).
  int uses(const TensorImpl* leaf);
  /// A gradient returned as the .grad it was offered is already delivered: drops it.
  void take_delivered(std::vector<Tensor>& input_grads);

 private:
  const std::vector<Tensor>& roots_;
  bool enabled_;
  const Node* node_ = nullptr;
  const std::vector<Tensor>* grads_ = nullptr;
  std::vector<Tensor> offered_;  // per input of the current node
  std::unordered_map<const TensorImpl*, int> uses_;
  bool counted_ = false;
};

}  // namespace tg::detail
