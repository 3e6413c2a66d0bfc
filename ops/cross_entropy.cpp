// ops/cross_entropy.cpp — cross-entropy fused with log-softmax: the reference kernels
// forward and backward, then the Function.
// Tests: tests/ops/cross_entropy_test.cpp. Course: docs/course/07-softmax-cross-entropy.md.
//
// Shape legend: B = batch, T = time, C = classes (V = vocab for a language model). logits
// (..., C) are seen as `rows` rows of C (rows = B * T for (B, T, C)); targets (...) give one
// class t per row. e = label_smoothing, q = (1 - e) * onehot(t) + e / C the target
// distribution (it sums to 1).
//
// Forward, per row (lse = log-sum-exp, computed with the max subtracted as in softmax):
//   m      = max_c x_c
//   lse    = m + log(sum_c exp(x_c - m))
//   logp_c = x_c - lse
//   loss   = -sum_c q_c * logp_c = (1 - e) * (lse - x_t) + (e / C) * (C * lse - sum_c x_c)
//   loss   = 0 for a row whose target is ignore_index
// then "sum" adds the rows, "mean" divides that sum by count = the rows not ignored.
//
// Backward, per row. d(lse)/dx_j = exp(x_j - lse) = p_j (the softmax), so
//   d(loss)/dx_j = -sum_c q_c * ([c = j] - p_j) = -q_j + p_j * sum_c q_c = p_j - q_j
// since q sums to 1. Without smoothing that is the famous p - onehot(t). With the upstream
// gradient dL (one per row for "none", one for all rows otherwise, divided by count for
// "mean"):
//   dx_j = (p_j - q_j) * dL / count             and a zero row where t is ignored.
// The backward needs the logits (p comes from them) and lse: one number per row. No
// (rows, C) probability tensor is kept between forward and backward.
//
// The fast kernels (ops/fast/cross_entropy.cpp) compute the same math per row, vectorised and
// with rows shared between threads.
#include "ops/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/compute.h"

namespace tg {
namespace {

using detail::as_compute;
using detail::compute_type;
using detail::round_to;
using kernels::GradOut;
using kernels::zero_unless_adding;

// ---------------------------------------------------------------- reference kernels
template <class F>
void cross_entropy_forward(const F* x, const int64_t* target, F* loss, F* lse, int64_t rows,
                           int64_t C, int64_t ignore_index, F e) {
  // exercise cross_entropy.forward: begin
  for (int64_t r = 0; r < rows; ++r) {
    const F* xr = x + r * C;
    F m = -std::numeric_limits<F>::infinity();  // the row's max
    for (int64_t c = 0; c < C; ++c) m = std::max(m, xr[c]);
    if (m == -std::numeric_limits<F>::infinity()) m = 0;  // all -inf: lse = -inf, no nan here
    F s = 0, sum_x = 0;
    for (int64_t c = 0; c < C; ++c) {
      s += std::exp(xr[c] - m);
      sum_x += xr[c];
    }
    lse[r] = m + std::log(s);
    if (target[r] == ignore_index) {
      loss[r] = 0;
      continue;
    }
    const F nll = lse[r] - xr[target[r]];  // -logp_t
    // -sum_c logp_c, only when it counts: a logit of -inf (a masked class) makes it +inf, and
    // 0 * inf would turn a finite loss into NaN.
    const F smooth = e > 0 ? static_cast<F>(C) * lse[r] - sum_x : F(0);
    loss[r] = (F(1) - e) * nll + e / static_cast<F>(C) * smooth;
  }
  // exercise cross_entropy.forward: end
}

/// dx += (p - q) * w per row, w = dloss * factor (see the contract in ops/cross_entropy.h).
template <class F>
void cross_entropy_backward(const F* x, const int64_t* target, const F* lse, const F* dloss,
                            int64_t dloss_step, F factor, GradOut<F> dx, int64_t rows, int64_t C,
                            int64_t ignore_index, F e) {
  zero_unless_adding(dx, rows * C);
  // exercise cross_entropy.backward: begin
  const F off = e / static_cast<F>(C);  // q_c for c != t
  for (int64_t r = 0; r < rows; ++r) {
    if (target[r] == ignore_index) continue;  // a zero row
    const F* xr = x + r * C;
    F* dxr = dx.data + r * C;
    const F w = dloss[r * dloss_step] * factor;
    for (int64_t c = 0; c < C; ++c) dxr[c] += (std::exp(xr[c] - lse[r]) - off) * w;
    dxr[target[r]] -= (F(1) - e) * w;  // q_t = (1 - e) + e / C
  }
  // exercise cross_entropy.backward: end
}

// ---------------------------------------------------------------- helpers
enum class Reduction { kMean, kSum, kNone };

struct CrossEntropyState {
  Reduction reduction = Reduction::kMean;
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  int64_t count = 0;  // rows whose target is not ignored
};

Reduction parse_reduction(std::string_view reduction) {
  if (reduction == "mean") return Reduction::kMean;
  if (reduction == "sum") return Reduction::kSum;
  TG_CHECK(reduction == "none", ValueError,
           "cross_entropy: reduction must be \"mean\", \"sum\" or \"none\", got \"{}\"", reduction);
  return Reduction::kNone;
}

void check_args(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& o) {
  TG_CHECK(is_floating_point(logits.dtype()), DTypeError,
           "cross_entropy: logits {} must be floating point, got {}", logits.shape(),
           logits.dtype());
  TG_CHECK(targets.dtype() == kInt64, DTypeError,
           "cross_entropy: targets {} must be int64 class indices, got {}", targets.shape(),
           targets.dtype());
  TG_CHECK(logits.dim() >= 1, ShapeError,
           "cross_entropy: logits must have at least 1 dim (..., C), got shape {}", logits.shape());
  Shape expected = logits.shape();
  expected.erase(expected.size() - 1);
  TG_CHECK(targets.shape() == expected, ShapeError,
           "cross_entropy: targets {} must be logits {} without the last (class) dim, i.e. {}",
           targets.shape(), logits.shape(), expected);
  TG_CHECK(logits.size(-1) > 0, ShapeError, "cross_entropy: logits {} have no classes (C = 0)",
           logits.shape());
  parse_reduction(o.reduction);
  TG_CHECK(o.label_smoothing >= 0.0 && o.label_smoothing <= 1.0, ValueError,
           "cross_entropy: label_smoothing must be in [0, 1], got {}", o.label_smoothing);
}

/// The multi-index of flat position `flat` in a row-major `shape`, e.g. (1, 2).
Shape unravel(int64_t flat, const Shape& shape) {
  Shape index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

/// Every target is in [0, C) or ignore_index (checked before any logit is read); returns
/// how many are not ignored.
int64_t check_targets(const Tensor& t, int64_t C, int64_t ignore_index) {
  const int64_t* p = t.data<int64_t>();
  int64_t count = 0;
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    if (p[i] == ignore_index) continue;
    TG_CHECK(p[i] >= 0 && p[i] < C, IndexError,
             "cross_entropy: target {} at position {} is out of range for C = {} classes "
             "(expected [0, {}) or ignore_index {})",
             p[i], unravel(i, t.shape()), C, C, ignore_index);
    ++count;
  }
  return count;
}

// ---------------------------------------------------------------- the Function
struct CrossEntropy : Function<CrossEntropy> {
  static constexpr std::string_view kName = "cross_entropy";
  static constexpr AutocastRule kAutocast = AutocastRule::kInFloat32;  // core/autocast.h
  using State = CrossEntropyState;

  // forward: loss_r = (1 - e) * (lse_r - x_{r,t}) + (e / C) * (C * lse_r - sum_c x_{r,c})
  static Tensor forward(Context<State>& ctx, const Tensor& logits, const Tensor& targets,
                        const CrossEntropyOptions& o) {
    check_args(logits, targets, o);
    const DType ct = compute_type(logits.dtype());
    const int64_t C = logits.size(-1);
    const Tensor tc = targets.contiguous();
    const int64_t count = check_targets(tc, C, o.ignore_index);
    const int64_t rows = tc.numel();
    const Tensor xc = as_compute(logits, ct);
    Tensor loss = empty(tc.shape(), ct), lse = empty({rows}, ct);
    Tensor out;
    const Reduction red = parse_reduction(o.reduction);
    detail::visit_compute(ct, [&]<class F>() {
      kernels::cross_entropy_forward.get<F>()(xc.data<F>(), tc.data<int64_t>(), loss.data<F>(),
                                              lse.data<F>(), rows, C, o.ignore_index,
                                              static_cast<F>(o.label_smoothing));
      if (red == Reduction::kNone) {
        out = loss;
        return;
      }
      F total = 0;
      for (int64_t r = 0; r < rows; ++r) total += loss.data<F>()[r];
      if (red == Reduction::kMean) {  // 0 / 0 = NaN when every target is ignored
        total = count > 0 ? total / static_cast<F>(count) : std::numeric_limits<F>::quiet_NaN();
      }
      out = scalar_tensor(static_cast<double>(total), ct);
    });
    ctx.state = {red, o.ignore_index, o.label_smoothing, count};
    ctx.save_for_backward(logits, tc, lse);  // lse: one number per row; no probabilities
    return round_to(out, logits.dtype());
  }

  // forward was: loss = -sum_c q_c * log(p_c), p = softmax(x), q = (1 - e) onehot(t) + e / C
  // so:          dx_j = (p_j - q_j) * dloss / count   (0 rows where t == ignore_index)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor(), Tensor()};
    const auto saved = ctx.saved_tensors();
    const Tensor &logits = saved[0], &targets = saved[1], &lse = saved[2];
    const State& s = ctx.state;
    const DType ct = lse.dtype();
    const int64_t C = logits.size(-1), rows = lse.numel();
    const Tensor xc = as_compute(logits, ct), gc = as_compute(g[0], ct);
    const GradBuffer dx = ctx.grad_buffer(0, logits.shape(), ct);
    detail::visit_compute(ct, [&]<class F>() {
      const int64_t step = s.reduction == Reduction::kNone ? 1 : 0;
      // count = 0 under "mean" means every row is ignored: the factor is never used.
      const F factor =
          s.reduction == Reduction::kMean && s.count > 0 ? F(1) / static_cast<F>(s.count) : F(1);
      kernels::cross_entropy_backward.get<F>()(
          xc.data<F>(), targets.data<int64_t>(), lse.data<F>(), gc.data<F>(), step, factor,
          detail::grad_out<F>(dx), rows, C, s.ignore_index, static_cast<F>(s.label_smoothing));
    });
    return {detail::finish_grad(dx, logits.dtype()), Tensor()};
  }
};

}  // namespace

constinit kernels::KernelPair<kernels::CrossEntropyForward, float, double>
    kernels::cross_entropy_forward{tg::cross_entropy_forward<float>,
                                   tg::cross_entropy_forward<double>};
constinit kernels::KernelPair<kernels::CrossEntropyBackward, float, double>
    kernels::cross_entropy_backward{tg::cross_entropy_backward<float>,
                                    tg::cross_entropy_backward<double>};

Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                     const CrossEntropyOptions& options, Here here) {
  return CrossEntropy::apply_at(here, logits, targets, options);
}

}  // namespace tg
