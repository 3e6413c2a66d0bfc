// tests/examples/train_step_test.cpp — the training step of chapter 15
// (examples/common/train_step.h, the exercise training_loop.step), held to the same step
// written out by hand: forward, loss, gradients of this batch only, the norm, the update.
// Two steps in a row, so that a step that forgets zero_grad (and adds this batch's gradient
// to the last one's), reports the loss after the update, or updates before the backward
// gives other parameters or another loss.
#include "examples/common/train_step.h"

#include <cmath>
#include <vector>

#include "test_util.h"

namespace tg::examples {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using ::testing::Pointwise;

struct Batch {
  Tensor x, y;
};

Batch batch(uint64_t seed) {
  Generator gen(seed);
  return {randn({6, 3}, kFloat32, gen), randint(0, 4, {6}, kInt64, gen)};
}

// The same step by hand on copies W, b of the parameters: returns {loss, gradient norm}
// and updates W and b in place with plain SGD (after clipping the gradient to `clip`).
std::vector<double> by_hand(Tensor& w, Tensor& b, const Batch& d, double lr, double clip) {
  const Tensor loss = cross_entropy(linear(d.x, w, b), d.y);
  const std::vector<Tensor> g = grad({loss}, {w, b});
  double sq = 0;
  for (const Tensor& gi : g) {
    for (double v : as_doubles(gi)) sq += v * v;
  }
  const double norm = std::sqrt(sq);
  // nn::clip_grad_norm's rule, as torch.nn.utils.clip_grad_norm_'s: scale by
  // clip / (norm + 1e-6) when that is below 1.
  const double coef = clip > 0 ? clip / (norm + 1e-6) : 1.0;
  const double scale = coef < 1.0 ? coef : 1.0;
  NoGradGuard no_grad;
  w = (w - g[0] * (lr * scale)).detach().requires_grad_();
  b = (b - g[1] * (lr * scale)).detach().requires_grad_();
  const double loss_before = loss.item<float>();
  return {loss_before, norm};
}

void check_two_steps(double clip) {
  Generator gen(3);
  nn::Linear model(3, 4, {}, gen);
  const std::vector<Tensor> params = model.parameters();
  nn::SGD sgd(params, {.lr = 0.5});
  Tensor w = params[0].detach().clone().requires_grad_();
  Tensor b = params[1].detach().clone().requires_grad_();
  for (uint64_t step = 0; step < 2; ++step) {
    const Batch d = batch(10 + step);
    const StepResult got = train_step(model, sgd, d.x, d.y, params, clip);
    const std::vector<double> want = by_hand(w, b, d, 0.5, clip);
    EXPECT_NEAR(got.loss, want[0], 1e-6) << "step " << step << ": the loss before the update";
    EXPECT_NEAR(got.grad_norm, want[1], 1e-5)
        << "step " << step << ": the norm of this batch's gradient, before clipping";
    EXPECT_THAT(as_doubles(params[0]), Pointwise(DoubleNear(1e-5), as_doubles(w)))
        << "step " << step << ": the weight after the update";
    EXPECT_THAT(as_doubles(params[1]), Pointwise(DoubleNear(1e-5), as_doubles(b)))
        << "step " << step << ": the bias after the update";
  }
}

TEST(TrainStep, TwoStepsMatchTheStepWrittenOutByHand) { check_two_steps(0.0); }

TEST(TrainStep, ClippingScalesTheGradientButReportsItsNormBeforehand) {
  check_two_steps(0.05);  // far below these gradients' norms: every step is clipped
}

}  // namespace
}  // namespace tg::examples
