// tests/ops/rms_norm_test.cpp — rms_norm and add_rms_norm: values, gradients (against finite
// differences and against the same math composed from primitives), dtypes, errors.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "ops/reference_kernels.h"
#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using ::testing::Each;
using testing::leaf;
using ::testing::Pointwise;
using testing::swapped_leaf;

/// rms_norm composed from primitives: x * rsqrt(mean(x * x, -1, keepdim) + eps) * w.
Tensor composed_rms_norm(const Tensor& x, const Tensor& w, double eps = 1e-5) {
  const Tensor ms = mean(mul(x, x), {-1}, /*keepdim=*/true);
  return mul(mul(x, rsqrt(add(ms, eps))), w);
}

/// A weight away from 0, so that every channel matters in the gradient.
Tensor weight_leaf(int64_t c, Generator& gen) {
  return add(rand({c}, kFloat64, gen), 0.5).detach().requires_grad_();
}

// ---------------------------------------------------------------- forward values
TEST(RmsNormTest, HandComputedValues) {
  // row 0: mean(9, 16) = 12.5; row 1: mean(1, 1) = 1.
  const Tensor x = tensor({3.0, 4.0, 1.0, -1.0}, {2, 2});
  const Tensor w = tensor({1.0, 2.0});
  const Tensor y = rms_norm(x, w);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  const double s0 = 1 / std::sqrt(12.5 + 1e-5), s1 = 1 / std::sqrt(1 + 1e-5);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-15), {3 * s0, 8 * s0, s1, -2 * s1}));
}

TEST(RmsNormTest, EpsIsUsed) {
  // mean(x^2) = 1; eps = 3 makes the RMS sqrt(4) = 2.
  const Tensor y = rms_norm(tensor({1.0, -1.0}), tensor({1.0, 1.0}), 3.0);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-15), {0.5, -0.5}));
}

TEST(RmsNormTest, ThreeDimensionalInputNormalisesEachRow) {
  Generator gen(1);
  const Tensor x = randn({2, 3, 7}, kFloat64, gen);
  const Tensor y = rms_norm(x, ones({7}, kFloat64));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 7}));
  // Every row of y now has mean square 1 / (1 + eps / ms), i.e. very nearly 1.
  const Tensor ms = mean(mul(y, y), {-1});
  EXPECT_THAT(as_doubles(ms), Each(DoubleNear(1.0, 1e-3)));
  EXPECT_THAT(as_doubles(y),
              Pointwise(DoubleNear(1e-12), as_doubles(composed_rms_norm(x, ones({7}, kFloat64)))));
}

TEST(RmsNormTest, Float32Values) {
  const Tensor y = rms_norm(tensor({3.f, 4.f}), tensor({1.f, 2.f}));
  EXPECT_EQ(y.dtype(), kFloat32);
  const double s = 1 / std::sqrt(12.5 + 1e-5);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-6), {3 * s, 8 * s}));
}

TEST(RmsNormTest, HalfInputsAreUpcastBeforeSquaring) {
  // 300^2 = 90000 > 65504, float16's largest value: squaring in float16 would give inf and
  // the output 0. Computed in float32 the row is (300, -300, 300, -300) / 300.
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor x = tensor({300.0, -300.0, 300.0, -300.0}).to(dt);
    const Tensor y = rms_norm(x, tensor({1.0, 1.0, 0.5, 2.0}).to(dt));
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-2), {1.0, -1.0, 0.5, -2.0}))
        << dtype_name(dt);
  }
}

TEST(RmsNormTest, HalfBackwardIsFiniteAndInTheInputDType) {
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor x = tensor({300.0, -200.0, 100.0}).to(dt).requires_grad_();
    const Tensor w = tensor({1.0, 0.5, 2.0}).to(dt).requires_grad_();
    const Tensor gout = tensor({1.0, 1.0, 1.0}).to(dt);
    const auto g = grad({rms_norm(x, w)}, {x, w}, {gout});
    // The same in float64, rounded: the half result must be close to it.
    const Tensor x64 = x.detach().to(kFloat64).requires_grad_();
    const Tensor w64 = w.detach().to(kFloat64).requires_grad_();
    const auto g64 = grad({rms_norm(x64, w64)}, {x64, w64}, {gout.to(kFloat64)});
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(g[i].dtype(), dt);
      EXPECT_THAT(as_doubles(g[i]), Pointwise(DoubleNear(2e-2), as_doubles(g64[i])))
          << dtype_name(dt) << " grad " << i;
    }
  }
}

TEST(RmsNormTest, SavesRstdNotTheOutput) {
  Generator gen(2);
  const Tensor x = leaf({4, 7}, gen);
  const Tensor w = weight_leaf(7, gen);
  const Tensor y = rms_norm(x, w);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "rms_norm");
  // x (28) + weight (7) + one rstd per row (4), in float64: not 28 more for y.
  EXPECT_EQ(y.grad_fn()->saved_bytes(), (28u + 7u + 4u) * 8u);
}

// ---------------------------------------------------------------- gradients
TEST(RmsNormTest, GradcheckShapes) {
  Generator gen(3);
  auto fn = [](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1]); };
  EXPECT_GRADCHECK(fn, {leaf({1, 7}, gen), weight_leaf(7, gen)});      // one row
  EXPECT_GRADCHECK(fn, {leaf({3, 129}, gen), weight_leaf(129, gen)});  // odd, long rows
  EXPECT_GRADCHECK(fn, {leaf({2, 3, 5}, gen), weight_leaf(5, gen)});   // 3-D
  EXPECT_GRADCHECK(fn, {leaf({4, 1}, gen), weight_leaf(1, gen)});      // C = 1
  EXPECT_GRADCHECK(fn, {leaf({7}, gen), weight_leaf(7, gen)});         // 1-D x
}

TEST(RmsNormTest, GradcheckNonContiguous) {
  Generator gen(4);
  auto fn = [](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1]); };
  const Tensor xt = swapped_leaf({5, 4}, 0, 1, gen);  // (4, 5), rows strided
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_GRADCHECK(fn, {xt, weight_leaf(5, gen)});
  // A weight that is every other element of a longer vector.
  const Tensor ws = add(rand({14}, kFloat64, gen), 0.5).slice(0, 0, 14, 2).requires_grad_();
  ASSERT_FALSE(ws.is_contiguous());
  EXPECT_GRADCHECK(fn, {leaf({3, 7}, gen), ws});
}

TEST(RmsNormTest, GradcheckComposedTwin) {
  Generator gen(5);
  auto fn = [](const std::vector<Tensor>& in) { return composed_rms_norm(in[0], in[1]); };
  EXPECT_GRADCHECK(fn, {leaf({3, 7}, gen), weight_leaf(7, gen)});
  EXPECT_GRADCHECK(fn, {swapped_leaf({7, 2, 3}, 0, 2, gen), weight_leaf(7, gen)});
}

TEST(RmsNormTest, FusedAgreesWithComposed) {
  Generator gen(6);
  for (const Shape& shape : {Shape{1, 7}, Shape{5, 129}, Shape{2, 3, 4}}) {
    const Tensor x = leaf(shape, gen);
    const Tensor w = weight_leaf(shape.back(), gen);
    const Tensor gout = randn(shape, kFloat64, gen);
    const Tensor fused = rms_norm(x, w), composed = composed_rms_norm(x, w);
    EXPECT_THAT(as_doubles(fused), Pointwise(DoubleNear(1e-12), as_doubles(composed)));
    const auto gf = grad({fused}, {x, w}, {gout});
    const auto gc = grad({composed}, {x, w}, {gout});
    for (int i = 0; i < 2; ++i) {
      EXPECT_THAT(as_doubles(gf[i]), Pointwise(DoubleNear(1e-10), as_doubles(gc[i])))
          << fmt::format("{} grad {}", shape, i);
    }
  }
}

TEST(RmsNormTest, OnlyTheRequestedGradientIsComputed) {
  Generator gen(7);
  const Tensor x = leaf({3, 4}, gen);
  const Tensor w = randn({4}, kFloat64, gen);  // a constant
  const Tensor dx = grad({rms_norm(x, w)}, {x}, {ones({3, 4}, kFloat64)})[0];
  const Tensor dx_composed = grad({composed_rms_norm(x, w)}, {x}, {ones({3, 4}, kFloat64)})[0];
  EXPECT_THAT(as_doubles(dx), Pointwise(DoubleNear(1e-10), as_doubles(dx_composed)));
  EXPECT_FALSE(w.grad().defined());
}

// The kink convention: RMSNorm has no kink. Its one suspicious point, an all-zero row, is
// smooth because eps > 0: s = eps^(-1/2) there, y = 0, and dx = s * dout * w (the x-dependent
// term vanishes) — the same as PyTorch's composed x * rsqrt(mean(x^2) + eps) * w.
TEST(RmsNormTest, ZeroRowIsSmoothThanksToEps) {
  const Tensor x = zeros({1, 3}, kFloat64).requires_grad_();
  const Tensor w = tensor({1.0, 2.0, -3.0}).requires_grad_();
  const Tensor y = rms_norm(x, w, 1e-4);
  EXPECT_THAT(as_doubles(y), Each(0.0));
  const auto g = grad({y}, {x, w}, {tensor({1.0, 1.0, 1.0}, {1, 3})});
  EXPECT_THAT(as_doubles(g[0]), Pointwise(DoubleNear(1e-9), {100.0, 200.0, -300.0}));
  EXPECT_THAT(as_doubles(g[1]), Each(0.0));
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1], 1e-4); },
                   {x, w});
}

// ---------------------------------------------------------------- add_rms_norm
TEST(AddRmsNormTest, HandComputedValues) {
  const Tensor x = tensor({1.0, 3.0}), r = tensor({2.0, 1.0});  // x + r = (3, 4)
  const AddRmsNormOutput o = add_rms_norm(x, r, tensor({1.0, 2.0}));
  const double s = 1 / std::sqrt(12.5 + 1e-5);
  EXPECT_THAT(as_doubles(o.residual), Pointwise(DoubleNear(0), {3.0, 4.0}));
  EXPECT_THAT(as_doubles(o.out), Pointwise(DoubleNear(1e-15), {3 * s, 8 * s}));
}

TEST(AddRmsNormTest, GradcheckBothOutputs) {
  Generator gen(8);
  // c weighs the residual output so that gradients reach x and residual through both outputs.
  for (const Shape& shape : {Shape{1, 7}, Shape{3, 129}, Shape{2, 3, 5}}) {
    const Tensor c = randn(shape, kFloat64, gen);
    auto fn = [c](const std::vector<Tensor>& in) {
      const AddRmsNormOutput o = add_rms_norm(in[0], in[1], in[2]);
      return add(o.out, mul(o.residual, c));
    };
    EXPECT_GRADCHECK(fn, {leaf(shape, gen), leaf(shape, gen), weight_leaf(shape.back(), gen)});
  }
  const Tensor xt = swapped_leaf({5, 4}, 0, 1, gen);
  auto fn = [](const std::vector<Tensor>& in) {
    const AddRmsNormOutput o = add_rms_norm(in[0], in[1], in[2]);
    return add(o.out, o.residual);
  };
  EXPECT_GRADCHECK(fn, {xt, leaf({4, 5}, gen), weight_leaf(5, gen)});
}

TEST(AddRmsNormTest, FusedAgreesWithComposed) {
  Generator gen(9);
  for (const Shape& shape : {Shape{1, 7}, Shape{4, 129}, Shape{2, 3, 4}}) {
    const Tensor x = leaf(shape, gen), r = leaf(shape, gen);
    const Tensor w = weight_leaf(shape.back(), gen);
    const Tensor g_out = randn(shape, kFloat64, gen), g_res = randn(shape, kFloat64, gen);
    const AddRmsNormOutput f = add_rms_norm(x, r, w);
    const Tensor h = add(x, r);
    const Tensor out = composed_rms_norm(h, w);
    EXPECT_THAT(as_doubles(f.out), Pointwise(DoubleNear(1e-12), as_doubles(out)));
    EXPECT_THAT(as_doubles(f.residual), Pointwise(DoubleNear(0), as_doubles(h)));
    const auto gf = grad({f.out, f.residual}, {x, r, w}, {g_out, g_res});
    const auto gc = grad({out, h}, {x, r, w}, {g_out, g_res});
    for (int i = 0; i < 3; ++i) {
      EXPECT_THAT(as_doubles(gf[i]), Pointwise(DoubleNear(1e-10), as_doubles(gc[i])))
          << fmt::format("{} grad {}", shape, i);
    }
  }
}

TEST(AddRmsNormTest, GradientOfOneOutputAlone) {
  Generator gen(10);
  const Tensor x = leaf({2, 3}, gen), r = leaf({2, 3}, gen), w = weight_leaf(3, gen);
  // Only the residual output used: dx = dresidual = dout, dw = 0.
  const Tensor g = randn({2, 3}, kFloat64, gen);
  const auto gr = grad({add_rms_norm(x, r, w).residual}, {x, r, w}, {g});
  EXPECT_EQ(as_doubles(gr[0]), as_doubles(g));
  EXPECT_EQ(as_doubles(gr[1]), as_doubles(g));
  EXPECT_THAT(as_doubles(gr[2]), Each(0.0));
  // Accumulating into both leaves keeps them independent (no shared buffer).
  add(add_rms_norm(x, r, w).out, 0.0).backward(ones({2, 3}, kFloat64));
  const Tensor dx = x.grad().clone();
  add_rms_norm(x, r, w).out.backward(ones({2, 3}, kFloat64));
  EXPECT_THAT(as_doubles(x.grad()), Pointwise(DoubleNear(1e-12), as_doubles(mul(dx, 2.0))));
  EXPECT_THAT(as_doubles(r.grad()), Pointwise(DoubleNear(1e-12), as_doubles(mul(dx, 2.0))));
}

TEST(AddRmsNormTest, HalfResidualIsRoundedThenNormalised) {
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor x = tensor({250.0, -200.0, 100.0, 50.0}).to(dt);
    const Tensor r = tensor({50.0, -100.0, 200.0, -350.0}).to(dt);
    const AddRmsNormOutput o = add_rms_norm(x, r, ones({4}, dt));
    EXPECT_EQ(o.out.dtype(), dt);
    EXPECT_EQ(o.residual.dtype(), dt);
    EXPECT_THAT(as_doubles(o.residual), Pointwise(DoubleNear(0), {300.0, -300.0, 300.0, -300.0}));
    EXPECT_THAT(as_doubles(o.out), Pointwise(DoubleNear(1e-2), {1.0, -1.0, 1.0, -1.0}));
    EXPECT_EQ(as_doubles(o.out), as_doubles(rms_norm(o.residual, ones({4}, dt))));
  }
}

// ---------------------------------------------------------------- fast kernels
// The fast kernels compute the same formulas as the plain ones, but add up the row sums
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
  ReferenceKernelsGuard guard(reference);
  std::vector<Tensor> outs = fn(inputs);
  std::vector<Tensor> gouts;
  for (const Tensor& o : outs) gouts.push_back(randn(o.shape(), o.dtype(), gen));
  std::vector<Tensor> result = outs;
  for (const Tensor& g : grad(outs, inputs, gouts)) result.push_back(g);
  return result;
}

/// |fast - reference| <= rel * max|reference| elementwise, for each pair of tensors.
void expect_close(const std::vector<Tensor>& fast, const std::vector<Tensor>& ref, double rel,
                  const std::string& what) {
  ASSERT_EQ(fast.size(), ref.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    EXPECT_EQ(fast[i].dtype(), ref[i].dtype());
    const std::vector<double> r = as_doubles(ref[i]);
    double scale = 0;
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

const std::vector<Shape> kAwkwardShapes = {{1, 1},    {1, 7},     {7, 15},    {3, 16},  {5, 17},
                                           {33, 129}, {2, 3, 31}, {65, 1000}, {129, 40}};

TEST(RmsNormTest, FastKernelsMatchTheReference) {
  Generator gen(11);
  auto fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{rms_norm(in[0], in[1])};
  };
  for (DType dt : {kFloat32, kFloat64}) {
    const double rel = dt == kFloat32 ? 1e-5 : 1e-13;
    for (const Shape& shape : kAwkwardShapes) {
      for (bool swap : {false, true}) {
        const std::vector<Tensor> in = norm_inputs(shape, dt, swap, gen);
        Generator g1(12), g2(12);
        expect_close(outputs_and_grads(false, fn, in, g1), outputs_and_grads(true, fn, in, g2), rel,
                     fmt::format("{} {} swapped={}", dtype_name(dt), shape, swap));
      }
    }
  }
}

TEST(AddRmsNormTest, FastKernelsMatchTheReference) {
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

TEST(RmsNormTest, FastKernelsGiveTheSameBitsOnOneAndTwoThreads) {
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

// ---------------------------------------------------------------- errors
TEST(RmsNormTest, Errors) {
  const Tensor x = zeros({2, 3}, kFloat32);
  EXPECT_TG_THROW(rms_norm(x, zeros({4})), ShapeError, "rms_norm", "weight must be [C] = (3)",
                  "(2, 3)", "(4)");
  EXPECT_TG_THROW(rms_norm(x, zeros({1, 3})), ShapeError, "rms_norm", "(2, 3)", "(1, 3)");
  EXPECT_TG_THROW(rms_norm(zeros({}), zeros({1})), ShapeError, "rms_norm", "at least 1 dim");
  EXPECT_TG_THROW(rms_norm(x, zeros({3}, kFloat64)), DTypeError, "rms_norm", "float64", "float32");
  EXPECT_TG_THROW(rms_norm(zeros({2, 3}, kInt64), zeros({3}, kInt64)), DTypeError, "rms_norm",
                  "floating point", "int64");
  EXPECT_TG_THROW(rms_norm(x, zeros({3}), 0.0), ValueError, "rms_norm", "eps must be > 0", "0");
  EXPECT_TG_THROW(rms_norm(x, zeros({3}), -1e-6), ValueError, "rms_norm", "-1e-06");
  EXPECT_TG_THROW(rms_norm(x, zeros({3}), std::nan("")), ValueError, "rms_norm", "nan");
}

TEST(AddRmsNormTest, Errors) {
  const Tensor x = zeros({2, 3}, kFloat32), w = zeros({3});
  EXPECT_TG_THROW(add_rms_norm(x, zeros({3}), w), ShapeError, "add_rms_norm", "(2, 3)", "(3)",
                  "same shape");
  EXPECT_TG_THROW(add_rms_norm(x, zeros({2, 3}, kFloat64), w), DTypeError, "add_rms_norm",
                  "residual", "float64");
  EXPECT_TG_THROW(add_rms_norm(x, x, zeros({2})), ShapeError, "add_rms_norm", "(2, 3)", "(2)");
  EXPECT_TG_THROW(add_rms_norm(x, x, zeros({3}, kBFloat16)), DTypeError, "add_rms_norm",
                  "bfloat16");
  EXPECT_TG_THROW(add_rms_norm(x, x, w, 0.0), ValueError, "add_rms_norm", "eps");
}

}  // namespace
}  // namespace tg
