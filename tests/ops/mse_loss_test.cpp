// tests/ops/mse_loss_test.cpp — mse_loss: literals, gradcheck, the composed twin, errors.
#include "test_util.h"

namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using tg::Tensor;
using tg::testing::as_doubles;
using tg::testing::leaf;

// The same loss from primitives: d = x - t, then d * d reduced.
Tensor composed_mse(const Tensor& x, const Tensor& t, const std::string& reduction) {
  const Tensor d = tg::sub(x, t);
  const Tensor sq = tg::mul(d, d);
  if (reduction == "mean") return tg::mean(sq);
  if (reduction == "sum") return tg::sum(sq);
  return sq;
}

auto fused(const std::string& reduction) {
  return
      [reduction](const std::vector<Tensor>& in) { return tg::mse_loss(in[0], in[1], reduction); };
}

TEST(MseLossTest, ForwardMatchesHandComputedValues) {
  // d = [1, -2, 0.5, 0] -> d^2 = [1, 4, 0.25, 0], sum 5.25, mean 1.3125
  const Tensor x = tg::tensor({2.0, 0.0, 1.5, 3.0}, {2, 2});
  const Tensor t = tg::tensor({1.0, 2.0, 1.0, 3.0}, {2, 2});
  EXPECT_EQ(tg::mse_loss(x, t).shape(), tg::Shape({}));
  EXPECT_DOUBLE_EQ(tg::mse_loss(x, t).item<double>(), 1.3125);
  EXPECT_DOUBLE_EQ(tg::mse_loss(x, t, "sum").item<double>(), 5.25);
  const Tensor none = tg::mse_loss(x, t, "none");
  EXPECT_EQ(none.shape(), tg::Shape({2, 2}));
  EXPECT_THAT(as_doubles(none), ElementsAre(1, 4, 0.25, 0));
}

TEST(MseLossTest, BackwardMatchesHandComputedValues) {
  // mean: dx = 2 d / N = [0.5, -1, 0.25, 0], dt = -dx
  Tensor x = tg::tensor({2.0, 0.0, 1.5, 3.0}).requires_grad_();
  Tensor t = tg::tensor({1.0, 2.0, 1.0, 3.0}).requires_grad_();
  auto g = tg::grad({tg::mse_loss(x, t)}, {x, t});
  EXPECT_THAT(as_doubles(g[0]), ElementsAre(0.5, -1, 0.25, 0));
  EXPECT_THAT(as_doubles(g[1]), ElementsAre(-0.5, 1, -0.25, 0));
  // sum with upstream 3: dx = 6 d
  g = tg::grad({tg::mse_loss(x, t, "sum")}, {x}, {tg::scalar_tensor(3.0, tg::kFloat64)});
  EXPECT_THAT(as_doubles(g[0]), ElementsAre(6, -12, 3, 0));
  // none with upstream [1, 2, 3, 4]: dx_i = 2 d_i dL_i
  g = tg::grad({tg::mse_loss(x, t, "none")}, {x}, {tg::tensor({1.0, 2.0, 3.0, 4.0})});
  EXPECT_THAT(as_doubles(g[0]), ElementsAre(2, -8, 3, 0));
}

TEST(MseLossTest, GradientAtZeroDifferenceIsZero) {
  // No kink: d^2 is smooth, and at d = 0 both gradients are exactly 0 (PyTorch agrees).
  Tensor x = tg::tensor({1.5, -2.0}).requires_grad_();
  Tensor t = tg::tensor({1.5, -2.0}).requires_grad_();
  const auto g = tg::grad({tg::mse_loss(x, t)}, {x, t});
  EXPECT_THAT(as_doubles(g[0]), ElementsAre(0.0, 0.0));
  EXPECT_THAT(as_doubles(g[1]), ElementsAre(0.0, 0.0));
}

TEST(MseLossTest, GradcheckOverShapesAndReductions) {
  tg::Generator gen(11);
  for (const std::string r : {"mean", "sum", "none"}) {
    EXPECT_GRADCHECK(fused(r), {leaf({3, 4}, gen), leaf({3, 4}, gen)}) << r;
    EXPECT_GRADCHECK(fused(r), {leaf({1}, gen), leaf({1}, gen)}) << r;
    EXPECT_GRADCHECK(fused(r), {leaf({2, 1, 7}, gen), leaf({2, 1, 7}, gen)}) << r;
    EXPECT_GRADCHECK(fused(r), {leaf({}, gen), leaf({}, gen)}) << r;
    // non-contiguous input and target
    EXPECT_GRADCHECK(fused(r),
                     {tg::testing::swapped_leaf({4, 3}, 0, 1, gen),
                      tg::randn({9, 4}, tg::kFloat64, gen).slice(0, 0, 9, 3).requires_grad_()})
        << r;
  }
}

TEST(MseLossTest, TargetWithoutGradGetsNone) {
  tg::Generator gen(12);
  Tensor x = leaf({5}, gen);
  const Tensor t = tg::randn({5}, tg::kFloat64, gen);
  tg::mse_loss(x, t).backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_FALSE(t.grad().defined());
}

TEST(MseLossTest, FusedAndComposedAgreeForwardAndBackward) {
  tg::Generator gen(13);
  for (const std::string r : {"mean", "sum", "none"}) {
    Tensor x = leaf({3, 7}, gen), t = leaf({3, 7}, gen);
    const Tensor yf = tg::mse_loss(x, t, r), yc = composed_mse(x, t, r);
    EXPECT_THAT(as_doubles(yf), Pointwise(DoubleNear(1e-12), as_doubles(yc))) << r;
    const Tensor dy = tg::randn(yf.shape(), tg::kFloat64, gen);
    const auto gf = tg::grad({yf}, {x, t}, {dy}), gc = tg::grad({yc}, {x, t}, {dy});
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_THAT(as_doubles(gf[i]), Pointwise(DoubleNear(1e-12), as_doubles(gc[i]))) << r;
    }
    EXPECT_GRADCHECK([r](const std::vector<Tensor>& in) { return composed_mse(in[0], in[1], r); },
                     {leaf({2, 5}, gen), leaf({2, 5}, gen)})
        << r;
  }
}

TEST(MseLossTest, Float32AndHalfTypes) {
  const Tensor x = tg::tensor({2.0f, 0.0f, 1.5f, 3.0f});
  const Tensor t = tg::tensor({1.0f, 2.0f, 1.0f, 3.0f});
  const Tensor y = tg::mse_loss(x, t);
  EXPECT_EQ(y.dtype(), tg::kFloat32);
  EXPECT_FLOAT_EQ(y.item<float>(), 1.3125f);
  for (tg::DType dt : {tg::kFloat16, tg::kBFloat16}) {
    Tensor xh = x.to(dt).requires_grad_();
    const Tensor yh = tg::mse_loss(xh, t.to(dt), "sum");
    EXPECT_EQ(yh.dtype(), dt);
    EXPECT_THAT(as_doubles(yh), ElementsAre(5.25));
    const Tensor g = tg::grad({yh}, {xh})[0];
    EXPECT_EQ(g.dtype(), dt);
    EXPECT_THAT(as_doubles(g), ElementsAre(2, -4, 1, 0));
  }
}

TEST(MseLossTest, EmptyMeanIsNan) {
  const Tensor e = tg::zeros({0}, tg::kFloat64);
  EXPECT_TRUE(std::isnan(tg::mse_loss(e, e).item<double>()));
  EXPECT_EQ(tg::mse_loss(e, e, "sum").item<double>(), 0.0);
}

TEST(MseLossTest, ErrorsNameTheOpAndValues) {
  EXPECT_TG_THROW(tg::mse_loss(tg::zeros({2, 3}), tg::zeros({3, 2})), ShapeError, "mse_loss",
                  "(2, 3)", "(3, 2)");
  EXPECT_TG_THROW(tg::mse_loss(tg::zeros({3}), tg::zeros({1})), ShapeError, "mse_loss", "(3)",
                  "(1)");
  EXPECT_TG_THROW(tg::mse_loss(tg::zeros({2}), tg::zeros({2}), "avg"), ValueError, "mse_loss",
                  "'avg'", "mean");
  EXPECT_TG_THROW(tg::mse_loss(tg::zeros({2}), tg::zeros({2}, tg::kFloat64)), DTypeError,
                  "mse_loss", "float32", "float64");
  EXPECT_TG_THROW(tg::mse_loss(tg::zeros({2}, tg::kInt64), tg::zeros({2}, tg::kInt64)), DTypeError,
                  "mse_loss", "int64");
}

}  // namespace
