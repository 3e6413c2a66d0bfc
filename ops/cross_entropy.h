// ops/cross_entropy.h — cross-entropy of logits against integer class targets, fused with its
// log-softmax: the loss of a classifier and of a language model's head.
//
// Shape legend: B = batch, T = time, C = classes (V = vocab for a language model).
//
//   logits (..., C) float, targets (...) int64  ->  loss  ()     reduction "mean" or "sum"
//                                                          (...)  reduction "none"
//
// NOTE the class dim is LAST: logits (B, T, V) with targets (B, T), straight from the LM
// head. PyTorch's F.cross_entropy wants the classes in dim 1 ((N, C) or (N, C, d1, ...));
// tapegrad's cross_entropy(logits, t) equals
//   F.cross_entropy(logits.reshape(-1, C), t.reshape(-1), ...)      (reshaped back for "none").
// 1-D logits (C) take a 0-d target.
//
// Per position, with logp = log_softmax(logits) over the last dim, t the target and
// e = label_smoothing (the target distribution q = (1 - e) * onehot(t) + e / C):
//   loss = -sum_c q_c * logp_c = (1 - e) * (-logp_t) + (e / C) * sum_c(-logp_c)
// and 0 where t == ignore_index. "mean" divides the sum by the number of positions that
// are not ignored (NaN when all are, as PyTorch), "sum" adds them, "none" keeps them.
#pragma once

#include <string_view>

#include "core/autograd.h"
#include "ops/kernels.h"

namespace tg {

/// The options of cross_entropy, named as in torch.nn.functional.cross_entropy.
struct CrossEntropyOptions {
  /// Positions whose target equals this contribute 0 to the loss and get zero gradient.
  int64_t ignore_index = -100;
  /// "mean" (over the positions not ignored), "sum" or "none" (one loss per position).
  std::string_view reduction = "mean";
  /// e in [0, 1]: the target distribution becomes (1 - e) * onehot + e / C.
  double label_smoothing = 0.0;
};

/// The cross-entropy between softmax(logits) over the LAST dim and the classes in targets,
/// fused with the log-softmax into one op whose backward is (softmax - q) * dloss / count.
/// logits (..., C) is floating point (float16/bfloat16 are computed in float32); targets is
/// int64 with shape (...); every target is in [0, C) or equals options.ignore_index.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                     const CrossEntropyOptions& options = {}, Here here = Here::current());

}  // namespace tg

// ---------------------------------------------------------------- the kernels
// Reference (ops/cross_entropy.cpp) and fast (ops/fast/cross_entropy.cpp), chosen by
// ops/kernels.h. `rows` rows of C logits, contiguous in the compute type F; one int64 target
// per row; e = label_smoothing. The write rule of ops/kernels.h.
namespace tg::kernels {

/// loss[r] = the (smoothed) cross-entropy of row r, 0 where its target is ignore_index;
/// lse[r] = its log-sum-exp.
template <class F>
using CrossEntropyForward = void(const F* x, const int64_t* target, F* loss, F* lse, int64_t rows,
                                 int64_t C, int64_t ignore_index, F e);
/// dx = (softmax(x) - q) * dloss[r * dloss_step] * factor per row, a zero row where the
/// target is ignored. dloss_step is 1 for reduction "none" (one upstream value per row), 0
/// otherwise; factor is 1 / count for "mean", 1 otherwise.
template <class F>
using CrossEntropyBackward = void(const F* x, const int64_t* target, const F* lse, const F* dloss,
                                  int64_t dloss_step, F factor, GradOut<F> dx, int64_t rows,
                                  int64_t C, int64_t ignore_index, F e);

extern KernelPair<CrossEntropyForward, float, double> cross_entropy_forward;
extern KernelPair<CrossEntropyBackward, float, double> cross_entropy_backward;

}  // namespace tg::kernels
