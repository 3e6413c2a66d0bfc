// tests/ops/fast/rms_norm_test.cpp — RMSNorm's fast kernels (ops/fast/rms_norm.cpp) against
// the reference kernels, for rms_norm and add_rms_norm, and across thread counts.
#include <algorithm>
#include <cmath>

#include "core/parallel.h"
#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using ::testing::Pointwise;

// The fast kernels compute the same formulas as the reference ones, but add up the row sums
// (mean square, sum of dout * w * x) in 16 interleaved partial sums and dw's sum over rows in
// blocks of 32 rows. Each order is within n * eps * sum|terms| of the exact sum (n terms,
// eps the unit roundoff); in practice, with random signs, within about sqrt(n) * eps of
// the largest results. With C <= 1000 terms that is below 1e-5 (float32) and 1e-13
// (float64) relative to the largest |value| of each result: the tolerance below.
// A wrong index or a missing term would be off by O(1).

/// Outputs then gradients (of every input) of `fn`, on the fast or on the reference kernels.
std::vector<Tensor> outputs_and_grads(
    bool reference, const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& inputs, Generator& gen) {
  KernelPathGuard guard(testing::kernels_for(reference));
  std::vector<Tensor> outs = fn(inputs);
  std::vector<Tensor> gouts;
  for (const Tensor& o : outs) gouts.push_back(randn(o.shape(), o.dtype(), gen));
  std::vector<Tensor> result = outs;
  for (const Tensor& g : grad(outs, inputs, gouts)) result.push_back(g);
  return result;
}

/// |fast - reference| <= rel * scale elementwise, for each pair of tensors, where scale is
/// max|reference| or, if larger, floors[i]: the size of the terms a result is the difference
/// of (see dx_term_size).
void expect_close(const std::vector<Tensor>& fast, const std::vector<Tensor>& ref, double rel,
                  const std::string& what, const std::vector<double>& floors = {}) {
  ASSERT_EQ(fast.size(), ref.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    EXPECT_EQ(fast[i].dtype(), ref[i].dtype());
    const std::vector<double> r = as_doubles(ref[i]);
    double scale = i < floors.size() ? floors[i] : 0;
    for (double v : r) scale = std::max(scale, std::abs(v));
    EXPECT_THAT(as_doubles(fast[i]), Pointwise(DoubleNear(rel * scale), r))
        << what << ", result " << i;
  }
}

/// Leaves of `dtype` for (x, weight) with x of `shape`; x transposed when `swap`.
std::vector<Tensor> norm_inputs(const Shape& shape, DType dtype, bool swap, Generator& gen) {
  Tensor x = randn(shape, kFloat64, gen).to(dtype);
  if (swap) x = x.transpose(0, 1);
  Tensor w = add(rand({x.size(-1)}, kFloat64, gen), 0.5).to(dtype);
  return {x.requires_grad_(), w.requires_grad_()};
}

/// dx of rms_norm is a difference, dx_c = r (w_c g_c - yhat_c m) with r = 1/rms(x) and
/// m = mean_c(w_c g_c yhat_c), and it cancels: with C = 1, yhat = +-1 and dx ~ r w g * eps / x^2.
/// The rounding errors of the two kernels are then relative to the terms, not to dx. Since
/// |yhat_c| <= sqrt(C) and |m| <= max|w g|, each term is at most r max|w| max|g| (1 + sqrt(C)).
double dx_term_size(const Tensor& x, const Tensor& w, const Tensor& g) {
  const int64_t C = x.size(-1);
  const std::vector<double> xs = as_doubles(x.contiguous());
  double r = 0;
  for (size_t row = 0; row < xs.size(); row += static_cast<size_t>(C)) {
    double ms = 0;
    for (int64_t c = 0; c < C; ++c)
      ms += xs[row + static_cast<size_t>(c)] * xs[row + static_cast<size_t>(c)];
    r = std::max(r, 1 / std::sqrt(ms / static_cast<double>(C) + 1e-5));
  }
  auto max_abs = [](const Tensor& t) {
    double m = 0;
    for (double v : as_doubles(t)) m = std::max(m, std::abs(v));
    return m;
  };
  return r * max_abs(w) * max_abs(g) * (1 + std::sqrt(static_cast<double>(C)));
}

const std::vector<Shape> kAwkwardShapes = {{1, 1},    {1, 7},     {7, 15},    {3, 16},  {5, 17},
                                           {33, 129}, {2, 3, 31}, {65, 1000}, {129, 40}};

TEST(FastRmsNormTest, MatchTheReference) {
  Generator gen(11);
  auto fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{rms_norm(in[0], in[1])};
  };
  for (DType dt : {kFloat32, kFloat64}) {
    const double rel = dt == kFloat32 ? 1e-5 : 1e-13;
    for (const Shape& shape : kAwkwardShapes) {
      for (bool swap : {false, true}) {
        const std::vector<Tensor> in = norm_inputs(shape, dt, swap, gen);
        Generator g1(12), g2(12), g3(12);
        const Tensor gout = randn(in[0].shape(), dt, g3);  // the gradient outputs_and_grads draws
        // Results: y, dx, dw.
        expect_close(outputs_and_grads(false, fn, in, g1), outputs_and_grads(true, fn, in, g2), rel,
                     fmt::format("{} {} swapped={}", dtype_name(dt), shape, swap),
                     {0, dx_term_size(in[0], in[1], gout)});
      }
    }
  }
}

TEST(FastAddRmsNormTest, MatchTheReference) {
  Generator gen(13);
  auto fn = [](const std::vector<Tensor>& in) {
    const AddRmsNormOutput o = add_rms_norm(in[0], in[2], in[1]);
    return std::vector<Tensor>{o.out, o.residual};
  };
  // float16 and bfloat16 take the fast backward too (computed in float32).
  for (DType dt : {kFloat32, kFloat64, kBFloat16}) {
    const double rel = dt == kFloat64 ? 1e-13 : dt == kFloat32 ? 1e-5 : 1e-2;
    for (const Shape& shape : kAwkwardShapes) {
      for (bool swap : {false, true}) {
        std::vector<Tensor> in = norm_inputs(shape, dt, swap, gen);
        in.push_back(randn(in[0].shape(), kFloat64, gen).to(dt).requires_grad_());
        Generator g1(14), g2(14);
        expect_close(outputs_and_grads(false, fn, in, g1), outputs_and_grads(true, fn, in, g2), rel,
                     fmt::format("{} {} swapped={}", dtype_name(dt), shape, swap));
      }
    }
  }
}

TEST(FastRmsNormTest, GiveTheSameBitsOnOneAndTwoThreads) {
  // 1100 x 1000: forward rows, backward row blocks and dw's columns are all split in two.
  Generator gen(15);
  auto both = [](const std::vector<Tensor>& in) {
    const AddRmsNormOutput o = add_rms_norm(in[0], in[2], in[1]);
    return std::vector<Tensor>{rms_norm(in[0], in[1]), o.out, o.residual};
  };
  for (DType dt : {kFloat32, kFloat64}) {
    std::vector<Tensor> in = norm_inputs({1100, 1000}, dt, false, gen);
    in.push_back(randn({1100, 1000}, dt, gen).requires_grad_());
    std::vector<Tensor> one, two;
    {
      NumThreadsGuard threads(1);
      Generator g(16);
      one = outputs_and_grads(false, both, in, g);
    }
    {
      NumThreadsGuard threads(2);
      Generator g(16);
      two = outputs_and_grads(false, both, in, g);
    }
    ASSERT_EQ(one.size(), two.size());
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(as_doubles(one[i]), as_doubles(two[i])) << dtype_name(dt) << ", result " << i;
    }
  }
}

}  // namespace
}  // namespace tg
