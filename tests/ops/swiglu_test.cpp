// tests/ops/swiglu_test.cpp — swiglu(a, b) and the fused silu_and_mul(x), each checked against
// its composition from primitives.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "ops/reference_kernels.h"
#include "ops/vectorize.h"
#include "test_util.h"

namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using tg::Tensor;

std::vector<double> values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }

// The composed twins, built only from differentiable primitives (no fused backward):
// silu(a) = a / (1 + e^-a), swiglu = silu(a) * b, silu_and_mul = swiglu of the two halves.
Tensor composed_swiglu(const Tensor& a, const Tensor& b) {
  return tg::mul(tg::div(a, tg::add(tg::exp(tg::neg(a)), 1.0)), b);
}
Tensor composed_silu_and_mul(const Tensor& x) {
  const int64_t h = x.size(-1) / 2;
  return composed_swiglu(x.narrow(-1, 0, h), x.narrow(-1, h, h));
}

// d(sum(y * gout))/d(inputs) for y = fn(inputs).
std::vector<Tensor> grads(const Tensor& y, const std::vector<Tensor>& inputs, const Tensor& gout) {
  return tg::grad({y}, inputs, {gout});
}

TEST(SwigluTest, ForwardValues) {
  // silu(1) = sigmoid(1) = 0.7310585786300049; silu(0) = 0; silu(-2) = -2 * sigmoid(-2)
  const Tensor a = tg::tensor(std::vector<double>{1.0, 0.0, -2.0});
  const Tensor b = tg::tensor(std::vector<double>{2.0, 5.0, -1.0});
  EXPECT_THAT(values(tg::swiglu(a, b)),
              Pointwise(DoubleNear(1e-15), {1.4621171572600098, 0.0, 0.2384058440442351}));
}

TEST(SwigluTest, SiluAndMulSplitsTheLastDim) {
  // rows [a | b]: (1, 0 | 2, 5) and (-2, 1 | -1, 3)
  const Tensor x =
      tg::tensor(std::vector<double>{1.0, 0.0, 2.0, 5.0, -2.0, 1.0, -1.0, 3.0}, {2, 4});
  const Tensor y = tg::silu_and_mul(x);
  EXPECT_EQ(y.shape(), (tg::Shape{2, 2}));
  EXPECT_THAT(values(y), Pointwise(DoubleNear(1e-15), {1.4621171572600098, 0.0, 0.2384058440442351,
                                                       3 * 0.7310585786300049}));
}

TEST(SwigluTest, BackwardValuesByHand) {
  // a = 0, b = 3: da = b * silu'(0) = 3 * 0.5, db = silu(0) = 0
  Tensor a = tg::tensor(std::vector<double>{0.0}).requires_grad_();
  Tensor b = tg::tensor(std::vector<double>{3.0}).requires_grad_();
  const auto g = grads(tg::swiglu(a, b), {a, b}, tg::ones({1}, tg::kFloat64));
  EXPECT_THAT(values(g[0]), ElementsAre(1.5));
  EXPECT_THAT(values(g[1]), ElementsAre(0.0));
}

TEST(SwigluTest, GradcheckSwiglu) {
  tg::Generator gen(11);
  auto fused = [](const std::vector<Tensor>& in) { return tg::swiglu(in[0], in[1]); };
  auto composed = [](const std::vector<Tensor>& in) { return composed_swiglu(in[0], in[1]); };
  const std::vector<std::pair<Tensor, Tensor>> cases = {
      {tg::testing::leaf({1}, gen), tg::testing::leaf({1}, gen)},
      {tg::testing::leaf({7}, gen), tg::testing::leaf({7}, gen)},
      {tg::testing::leaf({2, 1, 5}, gen), tg::testing::leaf({2, 1, 5}, gen)},
      {tg::testing::swapped_leaf({4, 3}, 0, 1, gen), tg::testing::leaf({3, 4}, gen)},
      {tg::testing::leaf({3, 4}, gen),
       tg::randn({3, 8}, tg::kFloat64, gen).slice(1, 0, 8, 2).requires_grad_()}};
  for (const auto& [a, b] : cases) {
    EXPECT_GRADCHECK(fused, {a, b});
    EXPECT_GRADCHECK(composed, {a, b});
  }
}

TEST(SwigluTest, GradcheckSiluAndMul) {
  tg::Generator gen(12);
  auto fused = [](const std::vector<Tensor>& in) { return tg::silu_and_mul(in[0]); };
  auto composed = [](const std::vector<Tensor>& in) { return composed_silu_and_mul(in[0]); };
  const std::vector<Tensor> cases = {
      tg::testing::leaf({2}, gen), tg::testing::leaf({7, 2}, gen),
      tg::testing::leaf({2, 1, 6}, gen), tg::testing::swapped_leaf({6, 3}, 0, 1, gen),
      tg::randn({3, 16}, tg::kFloat64, gen).slice(1, 0, 16, 2).requires_grad_()};
  for (const Tensor& x : cases) {
    EXPECT_GRADCHECK(fused, {x});
    EXPECT_GRADCHECK(composed, {x});
  }
}

TEST(SwigluTest, FusedAndComposedAgree) {
  tg::Generator gen(13);
  // 129 rows of width 2 * 7: odd sizes, a non-contiguous x.
  Tensor x = tg::randn({14, 129}, tg::kFloat64, gen).t().requires_grad_();
  const Tensor gout = tg::randn({129, 7}, tg::kFloat64, gen);
  const Tensor y = tg::silu_and_mul(x);
  const Tensor yc = composed_silu_and_mul(x);
  EXPECT_THAT(values(y), Pointwise(DoubleNear(1e-14), values(yc)));
  EXPECT_THAT(values(grads(y, {x}, gout)[0]),
              Pointwise(DoubleNear(1e-14), values(grads(yc, {x}, gout)[0])));

  Tensor a = tg::testing::leaf({129}, gen), b = tg::testing::leaf({129}, gen);
  const Tensor g2 = tg::randn({129}, tg::kFloat64, gen);
  const auto fused = grads(tg::swiglu(a, b), {a, b}, g2);
  const auto composed = grads(composed_swiglu(a, b), {a, b}, g2);
  EXPECT_THAT(values(tg::swiglu(a, b)),
              Pointwise(DoubleNear(1e-14), values(composed_swiglu(a, b))));
  EXPECT_THAT(values(fused[0]), Pointwise(DoubleNear(1e-14), values(composed[0])));
  EXPECT_THAT(values(fused[1]), Pointwise(DoubleNear(1e-14), values(composed[1])));
}

TEST(SwigluTest, SiluAndMulEqualsSwigluOfHalves) {
  tg::Generator gen(14);
  const Tensor x = tg::randn({3, 5, 8}, tg::kFloat32, gen);
  EXPECT_EQ(values(tg::silu_and_mul(x)),
            values(tg::swiglu(x.narrow(-1, 0, 4), x.narrow(-1, 4, 4))));
  EXPECT_EQ(values(tg::swiglu(x, x)), values(tg::mul(tg::silu(x), x)));
}

TEST(SwigluTest, OnlyRequestedGradientsAreComputed) {
  tg::Generator gen(15);
  Tensor a = tg::testing::leaf({4}, gen);
  const Tensor b = tg::randn({4}, tg::kFloat64, gen);  // no grad
  const auto g = grads(tg::swiglu(a, b), {a}, tg::ones({4}, tg::kFloat64));
  EXPECT_EQ(g[0].shape(), (tg::Shape{4}));
}

TEST(SwigluTest, Float32MatchesFloat64) {
  tg::Generator gen(16);
  const Tensor x = tg::randn({7, 258}, tg::kFloat64, gen);
  EXPECT_THAT(values(tg::silu_and_mul(x.to(tg::kFloat32))),
              Pointwise(DoubleNear(1e-5), values(tg::silu_and_mul(x))));
}

// Half types compute in float and round once, so they equal the float32 result rounded.
TEST(SwigluTest, HalfTypesRoundTheFloatResult) {
  tg::Generator gen(17);
  for (tg::DType dt : {tg::kFloat16, tg::kBFloat16}) {
    const Tensor x = tg::randn({3, 10}, tg::kFloat32, gen).to(dt);
    const Tensor x32 = x.to(tg::kFloat32);
    const Tensor y = tg::silu_and_mul(x);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(values(y), values(tg::silu_and_mul(x32).to(dt)));
    EXPECT_EQ(values(tg::swiglu(x, x)), values(tg::swiglu(x32, x32).to(dt)));
    // backward in the half type too: same as float32's, rounded
    Tensor leaf = x.detach().requires_grad_();
    Tensor leaf32 = x32.detach().requires_grad_();
    const Tensor dx = grads(tg::silu_and_mul(leaf), {leaf}, tg::ones({3, 5}, dt))[0];
    const Tensor dx32 = grads(tg::silu_and_mul(leaf32), {leaf32}, tg::ones({3, 5}))[0];
    EXPECT_EQ(dx.dtype(), dt);
    EXPECT_EQ(values(dx), values(dx32.to(dt)));
  }
}

// ---------------------------------------------------------------- fast kernels
// The fast kernels compute the plain kernels' formulas, with fast_exp (ops/vector_math.h,
// within 2 ulp of std::exp: tests/ops/vector_math_test.cpp) for std::exp: each result is a
// product of a few rounded factors, so it may differ by a few ulp relative to the size of its
// terms: `scale` below, per element, with 32 ulp of margin. Results below 1e-33 (float) or
// 1e-300 (double) are compared absolutely: there e^a is subnormal and has few bits left.
struct SwigluScales {
  std::vector<double> out, da, db;
};
SwigluScales swiglu_scales(const Tensor& a, const Tensor& b, const Tensor& dout) {
  const std::vector<double> av = values(a), bv = values(b), gv = values(dout);
  SwigluScales s;
  for (size_t i = 0; i < av.size(); ++i) {
    const double sig = 1 / (1 + std::exp(-av[i]));
    s.out.push_back(std::abs(av[i] * sig * bv[i]));
    s.da.push_back(std::abs(gv[i] * bv[i]) * sig * (1 + std::abs(av[i]) * (1 - sig)));
    s.db.push_back(std::abs(gv[i] * av[i] * sig));
  }
  return s;
}

void expect_within(const Tensor& fast, const Tensor& ref, const std::vector<double>& scale,
                   const std::string& what) {
  const bool f32 = fast.dtype() == tg::kFloat32;
  const double ulp = f32 ? 0x1p-23 : 0x1p-52, floor = f32 ? 1e-33 : 1e-300;
  const std::vector<double> f = values(fast), r = values(ref);
  ASSERT_EQ(f.size(), r.size()) << what;
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_NEAR(f[i], r[i], 32 * ulp * scale[i] + floor) << what << ", element " << i;
  }
}

// a with some extreme values mixed in: sigmoid's saturated ends and exp's flush to 0.
Tensor awkward_values(const tg::Shape& shape, tg::DType dt, tg::Generator& gen) {
  Tensor t = tg::mul(tg::randn(shape, tg::kFloat64, gen), 4.0);
  std::vector<double> v = values(t);
  const double extremes[] = {0.0, -0.0, 30.0, -30.0, 89.0, -88.0, -100.0, 750.0, -750.0};
  for (size_t i = 0; i < v.size(); i += 5) v[i] = extremes[(i / 5) % 9];
  return tg::tensor(v, shape).to(dt);
}

TEST(SwigluTest, FastKernelsMatchTheReference) {
  tg::Generator gen(18);
  for (tg::DType dt : {tg::kFloat32, tg::kFloat64}) {
    for (const tg::Shape& shape : {tg::Shape{1}, tg::Shape{7}, tg::Shape{129}, tg::Shape{3, 17},
                                   tg::Shape{33, 40}, tg::Shape{2, 3, 31}}) {
      // swiglu, with a transposed (non-contiguous) when it has two dims
      const bool swap = shape.size() == 2;
      const Tensor a = swap ? awkward_values({shape[1], shape[0]}, dt, gen).transpose(0, 1)
                            : awkward_values(shape, dt, gen);
      const Tensor b = tg::randn(shape, dt, gen);
      const Tensor dout = tg::randn(shape, dt, gen);
      const SwigluScales sc = swiglu_scales(a, b, dout);
      const std::string what = fmt::format("swiglu {} {}", tg::dtype_name(dt), shape);
      std::vector<Tensor> res[2];
      for (bool reference : {false, true}) {
        tg::ReferenceKernelsGuard guard(reference);
        Tensor la = a.detach().requires_grad_(), lb = b.detach().requires_grad_();
        const Tensor y = tg::swiglu(la, lb);
        std::vector<Tensor> g = grads(y, {la, lb}, dout);
        res[reference] = {y, g[0], g[1]};
      }
      expect_within(res[0][0], res[1][0], sc.out, what + " out");
      expect_within(res[0][1], res[1][1], sc.da, what + " da");
      expect_within(res[0][2], res[1][2], sc.db, what + " db");
      // silu_and_mul of [a | b], the halves side by side in one (non-contiguous) tensor
      const int64_t last = static_cast<int64_t>(shape.size()) - 1;
      const Tensor x = tg::cat({a, b}, last);
      std::vector<Tensor> sm[2];
      for (bool reference : {false, true}) {
        tg::ReferenceKernelsGuard guard(reference);
        Tensor lx = x.detach().requires_grad_();
        const Tensor y = tg::silu_and_mul(lx);
        sm[reference] = {y, grads(y, {lx}, dout)[0]};
      }
      std::vector<double> dx_scale = sc.da;
      const int64_t h = shape.back();
      for (int64_t r = 0, rows = a.numel() / h; r < rows; ++r) {  // [da | db] per row
        dx_scale.insert(dx_scale.begin() + (2 * r + 1) * h, sc.db.begin() + r * h,
                        sc.db.begin() + (r + 1) * h);
      }
      expect_within(sm[0][0], sm[1][0], sc.out, "silu_and_mul of " + what + " out");
      expect_within(sm[0][1], sm[1][1], dx_scale, "silu_and_mul of " + what + " dx");
    }
  }
}

TEST(SwigluTest, FastKernelsGiveTheSameBitsOnOneAndTwoThreads) {
  tg::Generator gen(19);
  for (tg::DType dt : {tg::kFloat32, tg::kFloat64}) {
    const Tensor a = tg::randn({300, 700}, dt, gen), b = tg::randn({300, 700}, dt, gen);
    const Tensor x = tg::randn({300, 1400}, dt, gen), dout = tg::randn({300, 700}, dt, gen);
    std::vector<std::vector<double>> res[2];
    for (int threads : {1, 2}) {
      tg::NumThreadsGuard guard(threads);
      Tensor la = a.detach().requires_grad_(), lb = b.detach().requires_grad_();
      Tensor lx = x.detach().requires_grad_();
      const Tensor y = tg::swiglu(la, lb), z = tg::silu_and_mul(lx);
      const auto g = grads(y, {la, lb}, dout);
      res[threads - 1] = {values(y), values(g[0]), values(g[1]), values(z),
                          values(grads(z, {lx}, dout)[0])};
    }
    for (size_t i = 0; i < res[0].size(); ++i) {
      EXPECT_EQ(res[0][i], res[1][i]) << tg::dtype_name(dt) << ", result " << i;
    }
  }
}

TEST(SwigluTest, EmptyInputs) {
  EXPECT_EQ(tg::silu_and_mul(tg::zeros({0, 4})).shape(), (tg::Shape{0, 2}));
  EXPECT_EQ(tg::silu_and_mul(tg::zeros({3, 0})).shape(), (tg::Shape{3, 0}));
  EXPECT_EQ(tg::swiglu(tg::zeros({0}), tg::zeros({0})).numel(), 0);
}

TEST(SwigluTest, ErrorPaths) {
  const Tensor f = tg::zeros({2, 3});
  EXPECT_TG_THROW(tg::swiglu(f, tg::zeros({3, 2})), ShapeError, "swiglu", "(2, 3)", "(3, 2)");
  EXPECT_TG_THROW(tg::swiglu(f, tg::zeros({3})), ShapeError, "swiglu", "(2, 3)", "(3)");
  EXPECT_TG_THROW(tg::swiglu(f, tg::zeros({2, 3}, tg::kFloat64)), DTypeError, "swiglu", "float32",
                  "float64");
  EXPECT_TG_THROW(tg::swiglu(tg::zeros({2}, tg::kInt64), tg::zeros({2}, tg::kInt64)), DTypeError,
                  "swiglu", "int64");
  EXPECT_TG_THROW(tg::silu_and_mul(f), ShapeError, "silu_and_mul", "(2, 3)", "even", "3");
  EXPECT_TG_THROW(tg::silu_and_mul(tg::zeros({7})), ShapeError, "silu_and_mul", "(7)", "7");
  EXPECT_TG_THROW(tg::silu_and_mul(tg::zeros({})), ShapeError, "silu_and_mul", "0-d");
  EXPECT_TG_THROW(tg::silu_and_mul(tg::zeros({2}, tg::kBool)), DTypeError, "silu_and_mul", "bool");
}

}  // namespace
