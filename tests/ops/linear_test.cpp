// tests/ops/linear_test.cpp — linear: literals, gradcheck, the composed twin, dtypes, errors.
#include "test_util.h"

namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using tg::Tensor;
using tg::testing::as_doubles;
using tg::testing::grad_of;

// The same computation from primitives: y = x @ W^T (+ b). The fused op must agree with it.
Tensor composed_linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  const Tensor y = tg::matmul(x, w.t());
  return b.defined() ? tg::add(y, b) : y;
}

std::function<Tensor(const std::vector<Tensor>&)> fused(bool with_bias) {
  return [with_bias](const std::vector<Tensor>& in) {
    return tg::linear(in[0], in[1], with_bias ? in[2] : Tensor());
  };
}

TEST(LinearTest, ForwardMatchesHandComputedValues) {
  // x = [[1, 2], [3, 4]], W = [[1, 0], [1, -1], [0.5, 2]], b = [10, 20, 30]
  // row 0: [1+0, 1-2, 0.5+4] + b = [11, 19, 34.5]; row 1: [3, -1, 9.5] + b = [13, 19, 39.5]
  const Tensor x = tg::tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  const Tensor w = tg::tensor({1.0, 0.0, 1.0, -1.0, 0.5, 2.0}, {3, 2});
  const Tensor b = tg::tensor({10.0, 20.0, 30.0});
  const Tensor y = tg::linear(x, w, b);
  EXPECT_EQ(y.shape(), tg::Shape({2, 3}));
  EXPECT_THAT(as_doubles(y), ElementsAre(11, 19, 34.5, 13, 19, 39.5));
  EXPECT_THAT(as_doubles(tg::linear(x, w)), ElementsAre(1, -1, 4.5, 3, -1, 9.5));
}

TEST(LinearTest, OneDimensionalInputGivesOneDimensionalOutput) {
  const Tensor x = tg::tensor({2.0, -1.0});
  const Tensor w = tg::tensor({1.0, 1.0, 3.0, 4.0}, {2, 2});
  const Tensor y = tg::linear(x, w, tg::tensor({0.5, 0.0}));
  EXPECT_EQ(y.shape(), tg::Shape({2}));
  EXPECT_THAT(as_doubles(y), ElementsAre(1.5, 2.0));
}

TEST(LinearTest, BackwardMatchesHandComputedValues) {
  // dy = [[1, 0, 2], [0, 1, 1]]
  // dx = dy W = [[1 + 1, 0 + 4], [1 + 0.5, -1 + 2]] = [[2, 4], [1.5, 1]]
  // dW = dy^T x = [[1, 2], [3, 4], [2 + 3, 4 + 4]];  db = column sums of dy = [1, 1, 3]
  Tensor x = tg::tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}).requires_grad_();
  Tensor w = tg::tensor({1.0, 0.0, 1.0, -1.0, 0.5, 2.0}, {3, 2}).requires_grad_();
  Tensor b = tg::tensor({10.0, 20.0, 30.0}).requires_grad_();
  const Tensor dy = tg::tensor({1.0, 0.0, 2.0, 0.0, 1.0, 1.0}, {2, 3});
  const auto g = tg::grad({tg::linear(x, w, b)}, {x, w, b}, {dy});
  EXPECT_THAT(as_doubles(g[0]), ElementsAre(2, 4, 1.5, 1));
  EXPECT_THAT(as_doubles(g[1]), ElementsAre(1, 2, 3, 4, 5, 8));
  EXPECT_THAT(as_doubles(g[2]), ElementsAre(1, 1, 3));
}

TEST(LinearTest, WeightGradSumsOverAllLeadingDims) {
  // x (2, 3, 4): the weight serves all 6 positions, so dW = sum over both leading dims.
  tg::Generator gen(7);
  Tensor x = tg::randn({2, 3, 4}, tg::kFloat64, gen);
  Tensor w = tg::randn({5, 4}, tg::kFloat64, gen).requires_grad_();
  Tensor b = tg::randn({5}, tg::kFloat64, gen).requires_grad_();
  const Tensor dy = tg::randn({2, 3, 5}, tg::kFloat64, gen);
  const auto g = tg::grad({tg::linear(x, w, b)}, {w, b}, {dy});
  const Tensor dw = tg::matmul(dy.reshape({6, 5}).t(), x.reshape({6, 4}));
  EXPECT_THAT(as_doubles(g[0]), Pointwise(DoubleNear(1e-12), as_doubles(dw)));
  EXPECT_THAT(as_doubles(g[1]), Pointwise(DoubleNear(1e-12), as_doubles(tg::sum(dy, {0, 1}))));
}

TEST(LinearTest, GradcheckOverShapes) {
  tg::Generator gen(1);
  using tg::testing::leaf;
  // 2-D, size-1 dims, 3-D x, odd sizes, and 1-D x
  EXPECT_GRADCHECK(fused(true), {leaf({4, 3}, gen), leaf({5, 3}, gen), leaf({5}, gen)});
  EXPECT_GRADCHECK(fused(true), {leaf({1, 1}, gen), leaf({1, 1}, gen), leaf({1}, gen)});
  EXPECT_GRADCHECK(fused(true), {leaf({2, 3, 7}, gen), leaf({1, 7}, gen), leaf({1}, gen)});
  EXPECT_GRADCHECK(fused(true), {leaf({7}, gen), leaf({3, 7}, gen), leaf({3}, gen)});
  EXPECT_GRADCHECK(fused(false), {leaf({3, 1, 5}, gen), leaf({2, 5}, gen)});
}

TEST(LinearTest, GradcheckNonContiguousInputs) {
  tg::Generator gen(2);
  using tg::testing::swapped_leaf;
  // x = base.t() (3, 4) and weight = base.t() (5, 4): both non-contiguous leaves
  const Tensor x = swapped_leaf({4, 3}, 0, 1, gen);
  const Tensor w = swapped_leaf({4, 5}, 0, 1, gen);
  ASSERT_FALSE(x.is_contiguous());
  ASSERT_FALSE(w.is_contiguous());
  EXPECT_GRADCHECK(fused(true), {x, w, tg::testing::leaf({5}, gen)});
  // a strided slice of x and of the bias
  const Tensor xs = tg::randn({2, 6, 3}, tg::kFloat64, gen).slice(1, 0, 6, 2).requires_grad_();
  const Tensor bs = tg::randn({8}, tg::kFloat64, gen).slice(0, 0, 8, 2).requires_grad_();
  EXPECT_GRADCHECK(fused(true), {xs, tg::testing::leaf({4, 3}, gen), bs});
}

TEST(LinearTest, OnlyTheInputsThatRequireGradGetOne) {
  tg::Generator gen(3);
  const Tensor x = tg::randn({2, 3}, tg::kFloat64, gen);
  Tensor w = tg::randn({4, 3}, tg::kFloat64, gen).requires_grad_();
  const Tensor b = tg::randn({4}, tg::kFloat64, gen);
  tg::sum(tg::linear(x, w, b)).backward();
  EXPECT_TRUE(w.grad().defined());
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

TEST(LinearTest, FusedAndComposedAgreeForwardAndBackward) {
  tg::Generator gen(4);
  for (bool with_bias : {true, false}) {
    Tensor x = tg::randn({2, 7, 5}, tg::kFloat64, gen).requires_grad_();
    Tensor w = tg::randn({3, 5}, tg::kFloat64, gen).requires_grad_();
    Tensor b = with_bias ? tg::randn({3}, tg::kFloat64, gen).requires_grad_() : Tensor();
    const Tensor dy = tg::randn({2, 7, 3}, tg::kFloat64, gen);
    std::vector<Tensor> wrt = {x, w};
    if (with_bias) wrt.push_back(b);
    const Tensor yf = tg::linear(x, w, b), yc = composed_linear(x, w, b);
    EXPECT_THAT(as_doubles(yf), Pointwise(DoubleNear(1e-12), as_doubles(yc)));
    const auto gf = tg::grad({yf}, wrt, {dy}), gc = tg::grad({yc}, wrt, {dy});
    for (size_t i = 0; i < wrt.size(); ++i) {
      EXPECT_THAT(as_doubles(gf[i]), Pointwise(DoubleNear(1e-12), as_doubles(gc[i]))) << i;
    }
  }
  // and the composed twin passes the same gradcheck
  using tg::testing::leaf;
  EXPECT_GRADCHECK(
      [](const std::vector<Tensor>& in) { return composed_linear(in[0], in[1], in[2]); },
      {leaf({2, 3, 7}, gen), leaf({4, 7}, gen), leaf({4}, gen)});
}

TEST(LinearTest, ZeroInFeaturesGivesTheBias) {
  // Linear has no kink; its one edge case is an empty sum: in_features = 0 gives y = b
  // (and dW is (out, 0)), as in PyTorch.
  Tensor x = tg::zeros({2, 0}, tg::kFloat64).requires_grad_();
  Tensor w = tg::zeros({3, 0}, tg::kFloat64).requires_grad_();
  Tensor b = tg::tensor({1.0, 2.0, 3.0}).requires_grad_();
  const Tensor y = tg::linear(x, w, b);
  EXPECT_THAT(as_doubles(y), ElementsAre(1, 2, 3, 1, 2, 3));
  const auto g = tg::grad({y}, {x, w, b}, {tg::ones({2, 3}, tg::kFloat64)});
  EXPECT_EQ(g[1].shape(), tg::Shape({3, 0}));
  EXPECT_THAT(as_doubles(g[2]), ElementsAre(2, 2, 2));
}

TEST(LinearTest, Float32ForwardAndBackward) {
  const Tensor x = tg::tensor({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2}).requires_grad_();
  const Tensor w = tg::tensor({0.5f, -1.0f}, {1, 2}).requires_grad_();
  const Tensor b = tg::tensor({0.25f}).requires_grad_();
  const Tensor y = tg::linear(x, w, b);
  EXPECT_EQ(y.dtype(), tg::kFloat32);
  EXPECT_THAT(y.to_vector<float>(), ElementsAre(-1.25f, -2.25f));
  const auto g = tg::grad({y}, {x, w, b}, {tg::ones({2, 1})});
  EXPECT_EQ(g[1].dtype(), tg::kFloat32);
  EXPECT_THAT(g[1].to_vector<float>(), ElementsAre(4.0f, 6.0f));
}

TEST(LinearTest, HalfTypesComputeInFloat32AndRoundOnce) {
  tg::Generator gen(5);
  const Tensor x32 = tg::randn({3, 129}, tg::kFloat32, gen);
  const Tensor w32 = tg::randn({7, 129}, tg::kFloat32, gen);
  const Tensor b32 = tg::randn({7}, tg::kFloat32, gen);
  const Tensor dy32 = tg::randn({3, 7}, tg::kFloat32, gen);
  for (tg::DType dt : {tg::kFloat16, tg::kBFloat16}) {
    // Inputs exactly representable in dt, so the float32 reference sees the same values.
    const Tensor x = x32.to(dt), w = w32.to(dt), b = b32.to(dt), dy = dy32.to(dt);
    Tensor xg = x.clone().requires_grad_(), wg = w.clone().requires_grad_();
    Tensor bg = b.clone().requires_grad_();
    const Tensor y = tg::linear(xg, wg, bg);
    EXPECT_EQ(y.dtype(), dt);
    const Tensor ref = tg::linear(x.to(tg::kFloat32), w.to(tg::kFloat32), b.to(tg::kFloat32));
    EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(0.0), as_doubles(ref.to(dt))));
    const auto g = tg::grad({y}, {xg, wg, bg}, {dy});
    Tensor x32g = x.to(tg::kFloat32).requires_grad_(), w32g = w.to(tg::kFloat32).requires_grad_();
    Tensor b32g = b.to(tg::kFloat32).requires_grad_();
    const auto r =
        tg::grad({tg::linear(x32g, w32g, b32g)}, {x32g, w32g, b32g}, {dy.to(tg::kFloat32)});
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(g[i].dtype(), dt);
      EXPECT_THAT(as_doubles(g[i]), Pointwise(DoubleNear(0.0), as_doubles(r[i].to(dt)))) << i;
    }
  }
}

TEST(LinearTest, ErrorsNameTheShapesAndDtypes) {
  const Tensor x = tg::zeros({4, 3});
  EXPECT_TG_THROW(tg::linear(x, tg::zeros({8, 5})), ShapeError,
                  "linear: x (4, 3) and weight (8, 5) disagree on in_features (3 vs 5)");
  EXPECT_TG_THROW(tg::linear(tg::scalar_tensor(1.0), tg::zeros({2, 1})), ShapeError, "linear",
                  "0-d", "()");
  EXPECT_TG_THROW(tg::linear(x, tg::zeros({2, 3, 1})), ShapeError, "linear", "weight", "2-D",
                  "(2, 3, 1)");
  EXPECT_TG_THROW(tg::linear(x, tg::zeros({8, 3}), tg::zeros({7})), ShapeError, "linear",
                  "bias (7)", "weight (8, 3)", "(8)");
  EXPECT_TG_THROW(tg::linear(x, tg::zeros({8, 3}), tg::zeros({1, 8})), ShapeError, "linear",
                  "bias (1, 8)");
  EXPECT_TG_THROW(tg::linear(x, tg::zeros({8, 3}, tg::kFloat64)), DTypeError, "linear", "float32",
                  "float64");
  EXPECT_TG_THROW(tg::linear(x, tg::zeros({8, 3}), tg::zeros({8}, tg::kFloat16)), DTypeError,
                  "linear", "bias", "float16", "float32");
  EXPECT_TG_THROW(tg::linear(tg::zeros({4, 3}, tg::kInt64), tg::zeros({8, 3}, tg::kInt64)),
                  DTypeError, "linear", "int64");
}

}  // namespace
