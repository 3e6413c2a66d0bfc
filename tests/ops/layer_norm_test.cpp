// tests/ops/layer_norm_test.cpp — layer_norm: values, gradients (against finite differences and
// against the same math composed from primitives), optional weight/bias, dtypes, errors.
#include <cmath>

#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using ::testing::Each;
using testing::leaf;
using ::testing::Pointwise;
using testing::swapped_leaf;

/// layer_norm composed from primitives: (x - mean) * rsqrt(mean((x - mean)^2) + eps) * w + b.
Tensor composed_layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps = 1e-5) {
  const Tensor xc = sub(x, mean(x, {-1}, /*keepdim=*/true));
  const Tensor var = mean(mul(xc, xc), {-1}, /*keepdim=*/true);
  Tensor y = mul(xc, rsqrt(add(var, eps)));
  if (w.defined()) y = mul(y, w);
  if (b.defined()) y = add(y, b);
  return y;
}

/// A weight away from 0, so that every channel matters in the gradient.
Tensor weight_leaf(int64_t c, Generator& gen) {
  return add(rand({c}, kFloat64, gen), 0.5).detach().requires_grad_();
}

// ---------------------------------------------------------------- forward values
TEST(LayerNormTest, HandComputedValues) {
  // row 0: (1, 3): mean 2, var 1; row 1: (2, 2, ...) -> (4, 0): mean 2, var 4.
  const Tensor x = tensor({1.0, 3.0, 4.0, 0.0}, {2, 2});
  const Tensor w = tensor({1.0, 2.0}), b = tensor({0.5, -1.0});
  const Tensor y = layer_norm(x, w, b);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  const double s0 = 1 / std::sqrt(1 + 1e-5), s1 = 1 / std::sqrt(4 + 1e-5);
  EXPECT_THAT(as_doubles(y),
              Pointwise(DoubleNear(1e-15), {-s0 + 0.5, 2 * s0 - 1, 2 * s1 + 0.5, -4 * s1 - 1}));
}

TEST(LayerNormTest, WithoutWeightAndBiasTheRowsAreStandardised) {
  // (1, 2, 3, 6): mean 3, deviations (-2, -1, 0, 3), biased var (4 + 1 + 0 + 9) / 4 = 3.5.
  const Tensor y = layer_norm(tensor({1.0, 2.0, 3.0, 6.0}), Tensor(), Tensor(), 0.5);
  const double s = 1 / std::sqrt(3.5 + 0.5);  // eps is used: sqrt(4) = 2
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-15), {-2 * s, -s, 0.0, 3 * s}));
  EXPECT_DOUBLE_EQ(s, 0.5);
}

TEST(LayerNormTest, WeightOnlyAndBiasOnly) {
  Generator gen(1);
  const Tensor x = randn({3, 5}, kFloat64, gen);
  const Tensor w = randn({5}, kFloat64, gen), b = randn({5}, kFloat64, gen);
  const Tensor plain = layer_norm(x);
  EXPECT_THAT(as_doubles(layer_norm(x, w)),
              Pointwise(DoubleNear(1e-15), as_doubles(mul(plain, w))));
  EXPECT_THAT(as_doubles(layer_norm(x, Tensor(), b)),
              Pointwise(DoubleNear(1e-15), as_doubles(add(plain, b))));
}

TEST(LayerNormTest, ThreeDimensionalInputNormalisesEachRow) {
  Generator gen(2);
  const Tensor x = add(mul(randn({2, 3, 7}, kFloat64, gen), 3.0), 5.0);
  const Tensor y = layer_norm(x);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 7}));
  EXPECT_THAT(as_doubles(mean(y, {-1})), Each(DoubleNear(0.0, 1e-12)));
  const Tensor var = mean(mul(y, y), {-1});
  EXPECT_THAT(as_doubles(var), Each(DoubleNear(1.0, 1e-4)));
}

// C = 1: every row is its own mean, so x - mean = 0 and y = bias, whatever x and weight are
// (PyTorch: F.layer_norm(x, (1,), w, b) == b). The gradients: dx = 0, dw = 0, db = sum dout.
TEST(LayerNormTest, SingleChannelGivesTheBias) {
  const Tensor x = tensor({2.0, 5.0}, {2, 1}).requires_grad_();
  const Tensor w = tensor({3.0}).requires_grad_(), b = tensor({0.5}).requires_grad_();
  const Tensor y = layer_norm(x, w, b);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(0), {0.5, 0.5}));
  const auto g = grad({y}, {x, w, b}, {tensor({1.0, 2.0}, {2, 1})});
  EXPECT_THAT(as_doubles(g[0]), Each(0.0));
  EXPECT_THAT(as_doubles(g[1]), Each(0.0));
  EXPECT_THAT(as_doubles(g[2]), Pointwise(DoubleNear(0), {3.0}));
  EXPECT_THAT(as_doubles(layer_norm(x.detach())), Each(0.0));
}

TEST(LayerNormTest, Float32Values) {
  const Tensor y = layer_norm(tensor({1.f, 3.f}), tensor({1.f, 2.f}), tensor({0.f, 1.f}));
  EXPECT_EQ(y.dtype(), kFloat32);
  const double s = 1 / std::sqrt(1 + 1e-5);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-6), {-s, 2 * s + 1}));
}

TEST(LayerNormTest, HalfInputsAreComputedInFloat32) {
  // Deviations of +-300: their squares (90000) overflow float16 (max 65504); in float32 the
  // row is exactly standardised to +-1.
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor x = tensor({1300.0, 700.0, 1300.0, 700.0}).to(dt);
    const Tensor y =
        layer_norm(x, tensor({1.0, 1.0, 0.5, 2.0}).to(dt), tensor({0.0, 0.0, 0.0, 1.0}).to(dt));
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-2), {1.0, -1.0, 0.5, -1.0}))
        << dtype_name(dt);
  }
}

TEST(LayerNormTest, HalfBackwardIsCloseToFloat64) {
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor x = tensor({3.0, -2.0, 1.0, 0.5}).to(dt).requires_grad_();
    const Tensor w = tensor({1.0, 0.5, 2.0, -1.0}).to(dt).requires_grad_();
    const Tensor b = tensor({0.0, 0.5, 1.0, 0.0}).to(dt).requires_grad_();
    const Tensor gout = tensor({1.0, -1.0, 0.5, 2.0}).to(dt);
    const auto g = grad({layer_norm(x, w, b)}, {x, w, b}, {gout});
    const Tensor x64 = x.detach().to(kFloat64).requires_grad_();
    const Tensor w64 = w.detach().to(kFloat64).requires_grad_();
    const Tensor b64 = b.detach().to(kFloat64).requires_grad_();
    const auto g64 = grad({layer_norm(x64, w64, b64)}, {x64, w64, b64}, {gout.to(kFloat64)});
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(g[i].dtype(), dt);
      EXPECT_THAT(as_doubles(g[i]), Pointwise(DoubleNear(3e-2), as_doubles(g64[i])))
          << dtype_name(dt) << " grad " << i;
    }
  }
}

TEST(LayerNormTest, SavesMeanAndRstdNotTheOutput) {
  Generator gen(3);
  const Tensor x = leaf({4, 7}, gen);
  const Tensor y = layer_norm(x, weight_leaf(7, gen), weight_leaf(7, gen));
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "layer_norm");
  // x (28) + weight (7) + mean and rstd per row (4 + 4), in float64; not y, not the bias.
  EXPECT_EQ(y.grad_fn()->saved_bytes(), (28u + 7u + 8u) * 8u);
  EXPECT_EQ(layer_norm(x).grad_fn()->saved_bytes(), (28u + 8u) * 8u);
}

// ---------------------------------------------------------------- gradients
TEST(LayerNormTest, GradcheckShapes) {
  Generator gen(4);
  auto fn = [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); };
  auto wb = [&](int64_t c) { return std::pair{weight_leaf(c, gen), leaf({c}, gen)}; };
  for (const Shape& shape : {Shape{1, 7}, Shape{3, 129}, Shape{2, 3, 5}, Shape{4, 1}, Shape{7}}) {
    const auto [w, b] = wb(shape.back());
    EXPECT_GRADCHECK(fn, {leaf(shape, gen), w, b}) << shape;
  }
}

TEST(LayerNormTest, GradcheckWithAndWithoutWeightAndBias) {
  Generator gen(5);
  const Tensor x = leaf({3, 6}, gen), w = weight_leaf(6, gen), b = leaf({6}, gen);
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return layer_norm(in[0]); }, {x});
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1]); }, {x, w});
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return layer_norm(in[0], Tensor(), in[1]); },
                   {x, b});
  EXPECT_GRADCHECK(
      [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2], 0.3); },
      {x, w, b});
}

TEST(LayerNormTest, GradcheckNonContiguous) {
  Generator gen(6);
  auto fn = [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); };
  const Tensor xt = swapped_leaf({5, 4}, 0, 1, gen);  // (4, 5), rows strided
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_GRADCHECK(fn, {xt, weight_leaf(5, gen), leaf({5}, gen)});
  const Tensor ws = add(rand({14}, kFloat64, gen), 0.5).slice(0, 0, 14, 2).requires_grad_();
  const Tensor bs = randn({21}, kFloat64, gen).slice(0, 0, 21, 3).requires_grad_();
  ASSERT_FALSE(ws.is_contiguous());
  ASSERT_FALSE(bs.is_contiguous());
  EXPECT_GRADCHECK(fn, {swapped_leaf({7, 2, 3}, 0, 2, gen), ws, bs});
}

TEST(LayerNormTest, GradcheckComposedTwin) {
  Generator gen(7);
  auto fn = [](const std::vector<Tensor>& in) { return composed_layer_norm(in[0], in[1], in[2]); };
  EXPECT_GRADCHECK(fn, {leaf({3, 7}, gen), weight_leaf(7, gen), leaf({7}, gen)});
  EXPECT_GRADCHECK(fn, {swapped_leaf({7, 2, 3}, 0, 2, gen), weight_leaf(7, gen), leaf({7}, gen)});
}

TEST(LayerNormTest, FusedAgreesWithComposed) {
  Generator gen(8);
  for (const Shape& shape : {Shape{1, 7}, Shape{5, 129}, Shape{2, 3, 4}, Shape{3, 1}}) {
    const Tensor x = leaf(shape, gen);
    const Tensor w = weight_leaf(shape.back(), gen), b = leaf({shape.back()}, gen);
    const Tensor gout = randn(shape, kFloat64, gen);
    const Tensor fused = layer_norm(x, w, b), composed = composed_layer_norm(x, w, b);
    EXPECT_THAT(as_doubles(fused), Pointwise(DoubleNear(1e-12), as_doubles(composed)));
    const auto gf = grad({fused}, {x, w, b}, {gout});
    const auto gc = grad({composed}, {x, w, b}, {gout});
    for (int i = 0; i < 3; ++i) {
      EXPECT_THAT(as_doubles(gf[i]), Pointwise(DoubleNear(1e-10), as_doubles(gc[i])))
          << fmt::format("{} grad {}", shape, i);
    }
  }
}

TEST(LayerNormTest, OnlyTheRequestedGradientIsComputed) {
  Generator gen(9);
  const Tensor x = leaf({3, 4}, gen);
  const Tensor w = randn({4}, kFloat64, gen), b = randn({4}, kFloat64, gen);  // constants
  const Tensor gout = randn({3, 4}, kFloat64, gen);
  const Tensor dx = grad({layer_norm(x, w, b)}, {x}, {gout})[0];
  const Tensor dx_composed = grad({composed_layer_norm(x, w, b)}, {x}, {gout})[0];
  EXPECT_THAT(as_doubles(dx), Pointwise(DoubleNear(1e-10), as_doubles(dx_composed)));
  EXPECT_FALSE(w.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

// The kink convention: LayerNorm has no kink. Its one suspicious point, a constant row
// (zero variance), is smooth because eps > 0: s = eps^(-1/2), xh = 0, y = b, and
// dx = s * (gh - mean(gh)) — the same as PyTorch's native layer_norm.
TEST(LayerNormTest, ConstantRowIsSmoothThanksToEps) {
  const Tensor x = full({1, 3}, 2.0, kFloat64).requires_grad_();
  const Tensor w = tensor({1.0, 2.0, -3.0}).requires_grad_();
  const Tensor b = tensor({0.0, 1.0, 2.0}).requires_grad_();
  const Tensor y = layer_norm(x, w, b, 1e-4);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(0), {0.0, 1.0, 2.0}));
  const auto g = grad({y}, {x, w, b}, {tensor({1.0, 1.0, 1.0}, {1, 3})});
  // gh = (1, 2, -3), mean(gh) = 0: dx = 100 * gh.
  EXPECT_THAT(as_doubles(g[0]), Pointwise(DoubleNear(1e-9), {100.0, 200.0, -300.0}));
  EXPECT_THAT(as_doubles(g[1]), Each(0.0));
  EXPECT_THAT(as_doubles(g[2]), Each(1.0));
  EXPECT_GRADCHECK(
      [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2], 1e-4); },
      {x, w, b});
}

// ---------------------------------------------------------------- errors
TEST(LayerNormTest, Errors) {
  const Tensor x = zeros({2, 3}, kFloat32);
  EXPECT_TG_THROW(layer_norm(x, zeros({4})), ShapeError, "layer_norm", "weight must be [C] = (3)",
                  "(2, 3)", "(4)");
  EXPECT_TG_THROW(layer_norm(x, Tensor(), zeros({2})), ShapeError, "layer_norm",
                  "bias must be [C] = (3)", "(2, 3)", "(2)");
  EXPECT_TG_THROW(layer_norm(x, zeros({1, 3})), ShapeError, "layer_norm", "(1, 3)");
  EXPECT_TG_THROW(layer_norm(zeros({}), zeros({1})), ShapeError, "layer_norm", "at least 1 dim",
                  "()");
  EXPECT_TG_THROW(layer_norm(x, zeros({3}, kFloat64)), DTypeError, "layer_norm", "weight",
                  "float64", "float32");
  EXPECT_TG_THROW(layer_norm(x, zeros({3}), zeros({3}, kBFloat16)), DTypeError, "layer_norm",
                  "bias", "bfloat16", "float32");
  EXPECT_TG_THROW(layer_norm(zeros({2, 3}, kInt64)), DTypeError, "layer_norm", "floating point",
                  "int64");
  EXPECT_TG_THROW(layer_norm(x, zeros({3}), zeros({3}), 0.0), ValueError, "layer_norm",
                  "eps must be > 0", "0");
  EXPECT_TG_THROW(layer_norm(x, Tensor(), Tensor(), -1e-6), ValueError, "layer_norm", "-1e-06");
  EXPECT_TG_THROW(layer_norm(x, Tensor(), Tensor(), std::nan("")), ValueError, "layer_norm", "nan");
}

}  // namespace
}  // namespace tg
