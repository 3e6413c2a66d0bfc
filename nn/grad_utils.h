// nn/grad_utils.h — gradient clipping and training diagnostics.
//
// Between tg::backward(loss) and opt.step() the gradients can be measured and adjusted:
//
//   double norm = nn::clip_grad_norm(model.parameters(), 1.0);   // log it: spikes = trouble
//   nn::check_all_have_grad(model.named_parameters());           // first step only: wiring
//   nn::UpdateTracker tracker(model.named_parameters());         // before opt.step()
//   opt.step();
//   for (auto& r : tracker.ratios()) ...                         // ~1e-3 is healthy
//
// Norms are accumulated in double whatever the dtype. Parameters whose .grad() is undefined
// are left out of every norm, as PyTorch does.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ops/ops.h"

namespace tg::nn {

/// The norm of all gradients together, as if concatenated into one vector: the p-norm
/// (sum |g|^p)^(1/p) for norm_type p > 0, or max |g| for norm_type = INFINITY. 0 when no
/// parameter has a gradient. ValueError unless norm_type > 0.
double global_grad_norm(const std::vector<Tensor>& params, double norm_type = 2.0);

/// torch.nn.utils.clip_grad_norm_: computes total = global_grad_norm(params, norm_type) and,
/// when max_norm / (total + 1e-6) < 1, multiplies every gradient in place by that factor, so
/// the norm becomes (just under) max_norm. Returns the norm before clipping. A NaN or
/// infinite norm is returned and the gradients are left alone (PyTorch would multiply them
/// by NaN): check the result before stepping. ValueError unless max_norm >= 0 and norm_type
/// > 0.
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0);

/// How much one optimizer step moved one parameter.
struct UpdateRatio {
  std::string name;
  double update_norm;  ///< ||w_after - w_before||_2
  double weight_norm;  ///< ||w_before||_2
  /// update_norm / weight_norm; 0 when nothing moved, +inf when a zero weight moved.
  double ratio;
};

/// The per-parameter update/weight ratio between two snapshots taken under the same names
/// in the same order (e.g. copies of model.named_parameters() before and after a step).
/// Around 1e-3 per step is the usual healthy range; far above, the learning rate is too
/// high for that tensor; far below, it barely learns. ValueError if the names or shapes of
/// the two lists disagree.
std::vector<UpdateRatio> update_ratios(const std::vector<std::pair<std::string, Tensor>>& before,
                                       const std::vector<std::pair<std::string, Tensor>>& after);

/// Snapshots named parameters on construction (or snapshot()) and reports, after a step,
/// each one's update ratio against the live tensors.
class UpdateTracker {
 public:
  explicit UpdateTracker(std::vector<std::pair<std::string, Tensor>> named);
  /// Copies the current values (call it right before opt.step()).
  void snapshot();
  /// update_ratios(snapshot, current values).
  std::vector<UpdateRatio> ratios() const;

 private:
  std::vector<std::pair<std::string, Tensor>> live_;
  std::vector<std::pair<std::string, Tensor>> before_;
};

/// The names of the parameters that require grad but have no gradient (undefined .grad())
/// after a backward, in the order given. Parameters that do not require grad (frozen) are
/// never listed.
std::vector<std::string> params_without_grad(
    const std::vector<std::pair<std::string, Tensor>>& named);

/// MisuseError listing every parameter params_without_grad finds: such a parameter is not
/// connected to the loss (a layer not called in forward, a detach() on the way, a tensor
/// recreated instead of registered), and the optimizer would silently never update it.
void check_all_have_grad(const std::vector<std::pair<std::string, Tensor>>& named);

}  // namespace tg::nn
