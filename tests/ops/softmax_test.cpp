// tests/ops/softmax_test.cpp — softmax and log_softmax: values, stability, gradients (against
// finite differences and against the same math composed from primitives), dtypes, errors.
#include <cmath>

#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using ::testing::Each;
using testing::grad_of;
using testing::leaf;
using ::testing::Pointwise;
using testing::swapped_leaf;

/// log_softmax composed from primitives: z = x - amax(x); z - log(sum(exp(z))).
Tensor composed_log_softmax(const Tensor& x, int64_t dim) {
  const Tensor z = sub(x, amax(x, {dim}, /*keepdim=*/true));
  return sub(z, log(sum(exp(z), {dim}, /*keepdim=*/true)));
}

/// softmax composed from primitives: e = exp(x - amax(x)); e / sum(e).
Tensor composed_softmax(const Tensor& x, int64_t dim) {
  const Tensor e = exp(sub(x, amax(x, {dim}, /*keepdim=*/true)));
  return div(e, sum(e, {dim}, /*keepdim=*/true));
}

// ---------------------------------------------------------------- forward values
TEST(SoftmaxTest, HandComputedValues) {
  // Row (0, ln 2, ln 5): exp = (1, 2, 5), sum 8. Row (3, 3, 3): uniform.
  const Tensor x = tensor({0.0, std::log(2.0), std::log(5.0), 3.0, 3.0, 3.0}, {2, 3});
  EXPECT_THAT(as_doubles(softmax(x, 1)),
              Pointwise(DoubleNear(1e-15), {1 / 8.0, 2 / 8.0, 5 / 8.0, 1 / 3.0, 1 / 3.0, 1 / 3.0}));
  EXPECT_THAT(as_doubles(log_softmax(x, -1)),
              Pointwise(DoubleNear(1e-15), {std::log(1 / 8.0), std::log(2 / 8.0), std::log(5 / 8.0),
                                            -std::log(3.0), -std::log(3.0), -std::log(3.0)}));
}

TEST(SoftmaxTest, DimZeroNormalisesColumns) {
  const Tensor x = tensor({0.0, 1.0, std::log(3.0), 1.0}, {2, 2});
  // column 0: exp (1, 3) -> (1/4, 3/4); column 1: equal -> (1/2, 1/2).
  EXPECT_THAT(as_doubles(softmax(x, 0)), Pointwise(DoubleNear(1e-15), {0.25, 0.5, 0.75, 0.5}));
  EXPECT_THAT(as_doubles(softmax(x, -2)), Pointwise(DoubleNear(1e-15), {0.25, 0.5, 0.75, 0.5}));
}

TEST(SoftmaxTest, MiddleDimOfThreeD) {
  Generator gen(1);
  const Tensor x = randn({2, 5, 3}, kFloat64, gen);
  const Tensor y = softmax(x, 1);
  EXPECT_THAT(as_doubles(sum(y, {1})), Each(DoubleNear(1.0, 1e-14)));
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-14), as_doubles(composed_softmax(x, 1))));
  EXPECT_THAT(as_doubles(log_softmax(x, 1)),
              Pointwise(DoubleNear(1e-14), as_doubles(composed_log_softmax(x, 1))));
}

TEST(SoftmaxTest, ZeroDimTensorIsOneSliceOfOne) {
  // As PyTorch: softmax of a 0-d tensor is 1, log_softmax is 0, for dim 0 or -1.
  const Tensor x = scalar_tensor(2.5, kFloat64);
  EXPECT_EQ(softmax(x, 0).shape(), Shape{});
  EXPECT_EQ(softmax(x, 0).item<double>(), 1.0);
  EXPECT_EQ(log_softmax(x, -1).item<double>(), 0.0);
}

TEST(SoftmaxTest, LargeLogitsDoNotOverflow) {
  // exp(1000) = inf in float64; with the max subtracted the row is exp((0, -1, -2)) / sum.
  const Tensor x = tensor({1000.0, 999.0, 998.0});
  const double s = 1 + std::exp(-1.0) + std::exp(-2.0);
  EXPECT_THAT(as_doubles(softmax(x, 0)),
              Pointwise(DoubleNear(1e-15), {1 / s, std::exp(-1.0) / s, std::exp(-2.0) / s}));
  EXPECT_THAT(as_doubles(log_softmax(x, 0)),
              Pointwise(DoubleNear(1e-12), {-std::log(s), -1 - std::log(s), -2 - std::log(s)}));
  // The same shift in float32, and very negative logits: log_softmax stays finite where
  // softmax underflows to 0.
  const Tensor y = tensor({-1000.f, 0.f});
  EXPECT_THAT(as_doubles(softmax(y, 0)), Pointwise(DoubleNear(0), {0.0, 1.0}));
  EXPECT_THAT(as_doubles(log_softmax(y, 0)), Pointwise(DoubleNear(1e-6), {-1000.0, 0.0}));
}

TEST(SoftmaxTest, Float32Values) {
  const Tensor y = softmax(tensor({0.f, std::log(3.f)}), 0);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-7), {0.25, 0.75}));
}

TEST(SoftmaxTest, HalfInputsComputeInFloat32) {
  for (DType dt : {kFloat16, kBFloat16}) {
    // 12 and 11 are exact in both; exp(12) = 162755 overflows float16 (max 65504) if the
    // shift or the sum were done in half precision.
    const Tensor x = tensor({12.0, 11.0, 0.0}).to(dt);
    const Tensor y = softmax(x, 0);
    EXPECT_EQ(y.dtype(), dt);
    const double s = 1 + std::exp(-1.0) + std::exp(-12.0);
    EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(4e-3), {1 / s, std::exp(-1.0) / s, 0.0}))
        << dtype_name(dt);
    EXPECT_THAT(as_doubles(log_softmax(x, 0)),
                Pointwise(DoubleNear(5e-2), {-std::log(s), -1 - std::log(s), -12 - std::log(s)}))
        << dtype_name(dt);
    // Backward: finite, in the input dtype, close to the float64 result.
    const Tensor xh = x.detach().requires_grad_();
    const Tensor x64 = x.to(kFloat64).requires_grad_();
    const Tensor gout = tensor({1.0, -2.0, 0.5});
    const Tensor dh = grad_of(softmax(xh, 0), xh, gout.to(dt));
    const Tensor d64 = grad_of(softmax(x64, 0), x64, gout);
    EXPECT_EQ(dh.dtype(), dt);
    EXPECT_THAT(as_doubles(dh), Pointwise(DoubleNear(1e-2), as_doubles(d64))) << dtype_name(dt);
  }
}

TEST(SoftmaxTest, SavesTheOutputNotTheInput) {
  Generator gen(2);
  const Tensor x = leaf({4, 7}, gen);
  for (const Tensor& y : {softmax(x, 1), log_softmax(x, 1)}) {
    ASSERT_NE(y.grad_fn(), nullptr);
    EXPECT_EQ(y.grad_fn()->saved_bytes(), 28u * 8u);  // y only
  }
  EXPECT_EQ(softmax(x, 1).grad_fn()->name(), "softmax");
  EXPECT_EQ(log_softmax(x, 1).grad_fn()->name(), "log_softmax");
  // The backward really reads the saved output: modifying it in place is caught.
  const Tensor y = softmax(x, 1);
  y.detach().fill_(0.0);
  EXPECT_TG_THROW(y.backward(ones({4, 7}, kFloat64)), MisuseError, "softmax");
}

// ---------------------------------------------------------------- gradients
TEST(SoftmaxTest, GradcheckShapesAndDims) {
  Generator gen(3);
  for (int64_t dim : {-1, 0, 1}) {
    auto sm = [dim](const std::vector<Tensor>& in) { return softmax(in[0], dim); };
    auto lsm = [dim](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); };
    for (const Shape& shape : {Shape{1, 7}, Shape{3, 129}, Shape{4, 1}, Shape{2, 3, 5}}) {
      EXPECT_GRADCHECK(sm, {leaf(shape, gen)}) << fmt::format("{} dim {}", shape, dim);
      EXPECT_GRADCHECK(lsm, {leaf(shape, gen)}) << fmt::format("{} dim {}", shape, dim);
    }
  }
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return softmax(in[0], 0); },
                   {leaf({7}, gen)});
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return log_softmax(in[0], 0); },
                   {leaf({}, gen)});
}

TEST(SoftmaxTest, GradcheckNonContiguous) {
  Generator gen(4);
  const Tensor xt = swapped_leaf({5, 4}, 0, 1, gen);  // (4, 5), rows strided
  ASSERT_FALSE(xt.is_contiguous());
  const Tensor xs = randn({3, 14}, kFloat64, gen).slice(1, 0, 14, 2).requires_grad_();
  ASSERT_FALSE(xs.is_contiguous());
  const Tensor x3 = swapped_leaf({7, 2, 3}, 0, 2, gen);  // (3, 2, 7)
  for (int64_t dim : {-1, 0}) {
    auto sm = [dim](const std::vector<Tensor>& in) { return softmax(in[0], dim); };
    auto lsm = [dim](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); };
    for (const Tensor& x : {xt, xs, x3}) {
      EXPECT_GRADCHECK(sm, {x});
      EXPECT_GRADCHECK(lsm, {x});
    }
  }
}

TEST(SoftmaxTest, GradcheckComposedTwin) {
  Generator gen(5);
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return composed_softmax(in[0], 1); },
                   {leaf({3, 7}, gen)});
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return composed_log_softmax(in[0], 0); },
                   {swapped_leaf({7, 3}, 0, 1, gen)});
}

TEST(SoftmaxTest, FusedAgreesWithComposed) {
  Generator gen(6);
  for (const auto& [shape, dim] :
       {std::pair{Shape{1, 7}, int64_t{1}}, std::pair{Shape{5, 129}, int64_t{-1}},
        std::pair{Shape{2, 3, 4}, int64_t{1}}, std::pair{Shape{6, 2}, int64_t{0}}}) {
    const Tensor x = leaf(shape, gen);
    const Tensor gout = randn(shape, kFloat64, gen);
    const std::string what = fmt::format("{} dim {}", shape, dim);
    const Tensor fs = softmax(x, dim), cs = composed_softmax(x, dim);
    EXPECT_THAT(as_doubles(fs), Pointwise(DoubleNear(1e-14), as_doubles(cs))) << what;
    EXPECT_THAT(as_doubles(grad_of(fs, x, gout)),
                Pointwise(DoubleNear(1e-12), as_doubles(grad_of(cs, x, gout))))
        << what;
    const Tensor fl = log_softmax(x, dim), cl = composed_log_softmax(x, dim);
    EXPECT_THAT(as_doubles(fl), Pointwise(DoubleNear(1e-12), as_doubles(cl))) << what;
    EXPECT_THAT(as_doubles(grad_of(fl, x, gout)),
                Pointwise(DoubleNear(1e-12), as_doubles(grad_of(cl, x, gout))))
        << what;
  }
}

TEST(SoftmaxTest, BackwardFormulasByHand) {
  // y = softmax(0, ln 3) = (1/4, 3/4); dout = (1, 0): sum(dout * y) = 1/4,
  // dx = y * (dout - 1/4) = (1/4 * 3/4, 3/4 * -1/4) = (3/16, -3/16).
  const Tensor x = tensor({0.0, std::log(3.0)}).requires_grad_();
  EXPECT_THAT(as_doubles(grad_of(softmax(x, 0), x, tensor({1.0, 0.0}))),
              Pointwise(DoubleNear(1e-15), {3 / 16.0, -3 / 16.0}));
  // log_softmax: dx = dout - p * sum(dout) = (1, 0) - (1/4, 3/4) * 1.
  EXPECT_THAT(as_doubles(grad_of(log_softmax(x, 0), x, tensor({1.0, 0.0}))),
              Pointwise(DoubleNear(1e-15), {0.75, -0.75}));
}

// Kink convention: softmax is smooth everywhere. Ties for the maximum (where the composed
// version's amax has a kink) change nothing: the shift cancels, forward and backward, and
// the gradient is the same as for distinct values. A uniform upstream gradient gives 0.
TEST(SoftmaxTest, TiedMaximaAreSmooth) {
  const Tensor x = tensor({2.0, 2.0, -1.0}).requires_grad_();
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return softmax(in[0], 0); }, {x});
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return log_softmax(in[0], 0); }, {x});
  const Tensor gout = tensor({1.0, -1.0, 0.5});
  EXPECT_THAT(as_doubles(grad_of(softmax(x, 0), x, gout)),
              Pointwise(DoubleNear(1e-14), as_doubles(grad_of(composed_softmax(x, 0), x, gout))));
  EXPECT_THAT(as_doubles(grad_of(softmax(x, 0), x, tensor({3.0, 3.0, 3.0}))),
              Each(DoubleNear(0.0, 1e-15)));
}

TEST(SoftmaxTest, AllMinusInfinityRowIsNaNAsPyTorch) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = tensor({-inf, -inf, 0.0, -inf}, {2, 2});
  const std::vector<double> y = as_doubles(softmax(x, 1));
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  EXPECT_THAT((std::vector<double>{y[2], y[3]}), Pointwise(DoubleNear(0), {1.0, 0.0}));
}

// ---------------------------------------------------------------- errors
TEST(SoftmaxTest, Errors) {
  const Tensor x = zeros({2, 3});
  EXPECT_TG_THROW(softmax(x, 2), IndexError, "softmax", "dim 2", "(2, 3)", "[-2, 1]");
  EXPECT_TG_THROW(log_softmax(x, -3), IndexError, "log_softmax", "dim -3", "(2, 3)");
  EXPECT_TG_THROW(softmax(zeros({}), 1), IndexError, "softmax", "dim 1", "()", "[-1, 0]");
  EXPECT_TG_THROW(softmax(zeros({2, 3}, kInt64), 1), DTypeError, "softmax", "floating point",
                  "int64", "(2, 3)");
  EXPECT_TG_THROW(log_softmax(zeros({2}, kBool), 0), DTypeError, "log_softmax", "bool");
}

}  // namespace
}  // namespace tg
