// tests/ops/fast/cross_entropy_test.cpp — cross-entropy's fast kernels
// (ops/fast/cross_entropy.cpp) against the reference kernels, across thread counts, and
// adding into an existing .grad.
#include <cmath>

#include "core/parallel.h"
#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;

/// |fast - ref| <= tol * (|ref| + scale) elementwise, scale = max|ref| or `floor` if larger.
/// The fast kernels compute exp to within 2 ulp of std::exp and add in 16 (8) lanes instead
/// of left to right, so each value differs by a few ulp of the largest one involved; tol =
/// 64 ulp leaves margin. A gradient w (p - y) can cancel to 0 (one class, label smoothing:
/// p = 1, y = (1 - e) + e), so its floor is the size of its terms, w.
void expect_close(const Tensor& fast, const Tensor& ref, double tol, double floor = 0) {
  const std::vector<double> f = as_doubles(fast), r = as_doubles(ref);
  ASSERT_EQ(f.size(), r.size());
  double scale = floor;
  for (double v : r) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_NEAR(f[i], r[i], tol * (std::abs(r[i]) + scale)) << "element " << i;
  }
}

/// Loss and d(loss)/d(logits), on the fast or the reference kernels.
std::pair<Tensor, Tensor> loss_and_grad(const Tensor& x, const Tensor& t,
                                        const CrossEntropyOptions& o, bool plain) {
  KernelPathGuard path(testing::kernels_for(plain));
  const Tensor loss = cross_entropy(x, t, o);
  const Tensor dloss = o.reduction == "none" ? ones(loss.shape(), loss.dtype()) : Tensor();
  return {loss, grad({loss}, {x},
                     dloss.defined() ? std::vector<Tensor>{dloss} : std::vector<Tensor>{})[0]};
}

TEST(FastCrossEntropyTest, MatchTheReference) {
  Generator gen(7);
  const int64_t shapes[][2] = {{1, 1}, {7, 1}, {1, 129}, {5, 7}, {3, 129}, {33, 1030}};
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = 64 * (dtype == kFloat32 ? 1.2e-7 : 2.3e-16);
    for (const auto& [rows, C] : shapes) {
      // Logits of spread 3 so that exp covers a wide range; every 3rd row ignored.
      const Tensor x = (randn({rows, C}, dtype, gen) * 3.0).detach().requires_grad_();
      std::vector<int64_t> t = randint(0, C, {rows}, kInt64, gen).to_vector<int64_t>();
      for (size_t r = 1; r < t.size(); r += 3) t[r] = -100;
      const Tensor targets = tensor(t, {rows});
      for (std::string_view reduction : {"mean", "sum", "none"}) {
        for (double e : {0.0, 0.1}) {
          const CrossEntropyOptions o{.reduction = reduction, .label_smoothing = e};
          SCOPED_TRACE(fmt::format("{} ({}, {}) {} e={}", dtype, rows, C, reduction, e));
          const auto [fast_loss, fast_grad] = loss_and_grad(x, targets, o, false);
          const auto [ref_loss, ref_grad] = loss_and_grad(x, targets, o, true);
          expect_close(fast_loss, ref_loss, tol);
          // w: 1 per row, or 1 / (rows not ignored) with "mean", at least 1 / rows.
          expect_close(fast_grad, ref_grad, tol,
                       reduction == "mean" ? 1.0 / static_cast<double>(rows) : 1.0);
        }
      }
    }
  }
}

TEST(FastCrossEntropyTest, TakeNonContiguousAndHalfLogits) {
  Generator gen(8);
  const Tensor base = randn({129, 6}, kFloat32, gen);
  const Tensor x = base.t().requires_grad_();  // (6, 129), column-major
  const Tensor t = randint(0, 129, {6}, kInt64, gen);
  const auto [fast_loss, fast_grad] = loss_and_grad(x, t, {}, false);
  const auto [ref_loss, ref_grad] = loss_and_grad(x, t, {}, true);
  expect_close(fast_loss, ref_loss, 64 * 1.2e-7);
  expect_close(fast_grad, ref_grad, 64 * 1.2e-7);
  // bfloat16 logits: both paths compute in float and round once, so they agree to within
  // one bfloat16 rounding of the float results.
  const Tensor h = base.to(kBFloat16).t().requires_grad_();
  const auto [fh_loss, fh_grad] = loss_and_grad(h, t, {}, false);
  const auto [rh_loss, rh_grad] = loss_and_grad(h, t, {}, true);
  expect_close(fh_loss, rh_loss, 1.0 / 128);
  expect_close(fh_grad, rh_grad, 1.0 / 128);
}

TEST(FastCrossEntropyTest, AreBitIdenticalForOneAndTwoThreads) {
  // 300 rows of 1000 classes: several pieces of rows_grain rows each.
  Generator gen(9);
  const Tensor x = randn({300, 1000}, kFloat32, gen).requires_grad_();
  const Tensor t = randint(0, 1000, {300}, kInt64, gen);
  std::pair<Tensor, Tensor> runs[2];
  for (int threads : {1, 2}) {
    NumThreadsGuard guard(threads);
    runs[threads - 1] = loss_and_grad(x, t, {.label_smoothing = 0.05}, false);
  }
  EXPECT_EQ(runs[0].first.item<float>(), runs[1].first.item<float>());
  EXPECT_EQ(runs[0].second.to_vector<float>(), runs[1].second.to_vector<float>());
}

TEST(FastCrossEntropyTest, AddingIntoAnExistingGradMatchesAddingAFreshOne) {
  // The second backward adds straight into x.grad (Context::grad_buffer); the sum must
  // be bit for bit the one of adding the freshly computed gradient to it.
  Generator gen(10);
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = randn({37, 129}, dtype, gen).requires_grad_();
    std::vector<int64_t> tv = randint(0, 129, {37}, kInt64, gen).to_vector<int64_t>();
    tv[3] = -100;
    const Tensor t = tensor(tv, {37});
    const Tensor g = grad({cross_entropy(x, t, {.label_smoothing = 0.2})}, {x})[0];
    cross_entropy(x, t, {.label_smoothing = 0.2}).backward();
    cross_entropy(x, t, {.label_smoothing = 0.2}).backward();
    EXPECT_EQ(as_doubles(x.grad()), as_doubles(add(g, g)));
  }
}

}  // namespace
}  // namespace tg
