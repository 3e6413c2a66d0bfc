// tests/ops/rms_norm_test.cpp — rms_norm and add_rms_norm: values, gradients (against finite
// differences and against the same math composed from primitives), dtypes, errors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/safetensors.h"
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

// Where a half result is rounded is part of the op. tapegrad's rms_norm widens x and the
// weight to float32 and rounds once, after the weight. Hugging Face's LlamaRMSNorm rounds the
// normalised value to the input dtype first, then multiplies by the weight in that dtype: a
// second rounding. Against the PyTorch fixture of that order (tests/reference/generate.py),
// the composition mul(rms_norm(x, ones), w) differs in far fewer elements than rms_norm(x, w)
// (none on the fast kernels; two float32 sums in another order can still tip a rounding),
// and both by at most one unit in the last place. docs/course/06-rms-norm.md ("Pitfalls")
// quotes the counts this test prints.
TEST(RmsNormTest, HalfRoundingOrder) {
  const safetensors::Contents fixture =
      safetensors::load(std::string(TAPEGRAD_FIXTURES_DIR) + "/half.safetensors");
  for (const std::string tag : {"f16", "bf16"}) {
    const std::string name = "rms_norm_weight_after_rounding_" + tag;
    const Tensor x = fixture.tensors.at(name + ".in0"), w = fixture.tensors.at(name + ".in1");
    const std::vector<double> theirs = as_doubles(fixture.tensors.at(name + ".out"));
    const double ulp_at_1 = x.dtype() == kFloat16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
    // How many elements of `ours` differ from PyTorch's; each by one unit in the last place
    // of the larger of the two at most (all are normal numbers here).
    const auto differ = [&](const Tensor& ours, const char* what) {
      const std::vector<double> v = as_doubles(ours);
      int64_t n = 0;
      for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == theirs[i]) continue;
        ++n;
        const double mag = std::max(std::abs(v[i]), std::abs(theirs[i]));
        EXPECT_LE(std::abs(v[i] - theirs[i]), ulp_at_1 * std::exp2(std::floor(std::log2(mag))))
            << tag << " " << what << ", element " << i;
      }
      return n;
    };
    const int64_t composed = differ(mul(rms_norm(x, ones({w.size(0)}, x.dtype())), w), "composed");
    const int64_t once = differ(rms_norm(x, w), "rms_norm");
    EXPECT_GT(once, 0) << tag << ": the two orders should not agree everywhere";
    EXPECT_LT(composed * 10, once) << tag << ": the composition should follow PyTorch's order";
    std::printf(
        "%s, of %zu elements: rms_norm(x, w) differs from PyTorch's order in %lld, "
        "mul(rms_norm(x, ones), w) in %lld\n",
        tag.c_str(), theirs.size(), static_cast<long long>(once), static_cast<long long>(composed));
  }
}

// The fused add_rms_norm keeps the residual stream in the input dtype: it rounds h = residual +
// branch first and normalises the rounded h, so its out is rms_norm of the residual it returns,
// bit for bit, even where the float32 sum would have normalised differently.
TEST(RmsNormTest, HalfAddRmsNormNormalisesTheRoundedSum) {
  Generator gen(7);
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor residual = (randn({4, 33}, kFloat32, gen) * 50).to(dt);
    const Tensor branch = (randn({4, 33}, kFloat32, gen) * 0.01).to(dt);
    const Tensor w = (rand({33}, kFloat32, gen) + 0.5).to(dt);
    const AddRmsNormOutput o = add_rms_norm(residual, branch, w);
    EXPECT_EQ(as_doubles(o.out), as_doubles(rms_norm(o.residual, w))) << dtype_name(dt);
    EXPECT_EQ(as_doubles(o.residual), as_doubles(add(residual, branch))) << dtype_name(dt);
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
