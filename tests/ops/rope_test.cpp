// tests/ops/rope_test.cpp — rope: hand values that pin the rotate-half pairing, the properties
// (pair norms kept, scores depend on relative positions only), gradients (against finite
// differences and against the same math composed from primitives), dtypes, errors.
#include <cmath>

#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using testing::leaf;
using ::testing::Pointwise;
using testing::swapped_leaf;

/// cos or sin (T, D/2) of positions[t] * theta^(-2i/D), built in double by the test.
Tensor table(const std::vector<int64_t>& positions, int64_t d, double theta, bool sine) {
  std::vector<double> v;
  for (int64_t p : positions) {
    for (int64_t i = 0; i < d / 2; ++i) {
      const double a = static_cast<double>(p) * std::pow(theta, -2.0 * i / d);
      v.push_back(sine ? std::sin(a) : std::cos(a));
    }
  }
  return tensor(v, {static_cast<int64_t>(positions.size()), d / 2});
}

/// rope composed from primitives: with x1 = x[..., :h], x2 = x[..., h:],
/// cat(x1 * cos - x2 * sin, x2 * cos + x1 * sin) along the last dim.
Tensor composed_rope(const Tensor& x, const std::vector<int64_t>& positions,
                     double theta = 10000.0) {
  const int64_t last = x.dim() - 1, d = x.size(-1), h = d / 2;
  const Tensor c = table(positions, d, theta, false), s = table(positions, d, theta, true);
  const Tensor x1 = x.slice(last, 0, h), x2 = x.slice(last, h, d);
  return cat({sub(mul(x1, c), mul(x2, s)), add(mul(x2, c), mul(x1, s))}, last);
}

Tensor positions_of(const std::vector<int64_t>& p) { return tensor(p); }

std::vector<int64_t> iota(int64_t n, int64_t start = 0) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + i);
  return v;
}

// ---------------------------------------------------------------- forward values
TEST(RopeTest, HandComputedValuesD2) {
  // D = 2: one pair, frequency theta^0 = 1 whatever theta: row t is rotated by t radians.
  const Tensor x = tensor({1.0, 0.0, 1.0, 0.0, 1.0, 2.0}, {3, 2});
  const Tensor y = rope(x, positions_of({0, 1, 1}), 123.0);
  const double c = std::cos(1.0), s = std::sin(1.0);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-15), {1.0, 0.0, c, s, c - 2 * s, 2 * c + s}));
}

TEST(RopeTest, HandComputedValuesPinTheRotateHalfPairing) {
  // D = 4, theta = 100: pair 0 is (x0, x2) at frequency 1, pair 1 is (x1, x3) at 100^(-1/2).
  // x = (1, 1, 0, 0) at position 2: pair 0 (1, 0) -> (cos 2, sin 2), pair 1 -> (cos .2, sin .2).
  // (The interleaved pairing (x0, x1), (x2, x3) would give (cos 2 - sin 2, sin 2 + cos 2, 0, 0).)
  const Tensor y = rope(tensor({1.0, 1.0, 0.0, 0.0}, {1, 4}), positions_of({2}), 100.0);
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-15), {std::cos(2.0), std::cos(0.2),
                                                           std::sin(2.0), std::sin(0.2)}));
}

TEST(RopeTest, PositionZeroIsTheIdentity) {
  Generator gen(1);
  const Tensor x = randn({2, 1, 8}, kFloat64, gen);
  EXPECT_EQ(as_doubles(rope(x, positions_of({0}))), as_doubles(x));
}

TEST(RopeTest, EveryPairKeepsItsNorm) {
  Generator gen(2);
  const Tensor x = randn({2, 5, 8}, kFloat64, gen);
  const Tensor y = rope(x, positions_of({0, 1, 7, 100, 4096}));
  auto pair_norms = [](const Tensor& t) {
    const Tensor a = t.slice(2, 0, 4), b = t.slice(2, 4, 8);
    return as_doubles(add(mul(a, a), mul(b, b)));
  };
  EXPECT_THAT(pair_norms(y), Pointwise(DoubleNear(1e-12), pair_norms(x)));
}

TEST(RopeTest, ScoresDependOnRelativePositionOnly) {
  // <rope(q, m), rope(k, n)> = <q, R(n - m) k>: the same for every (m, n) with n - m = -3.
  Generator gen(3);
  const Tensor q = randn({1, 16}, kFloat64, gen), k = randn({1, 16}, kFloat64, gen);
  auto score = [&](int64_t m, int64_t n) {
    return as_doubles(sum(mul(rope(q, positions_of({m})), rope(k, positions_of({n})))))[0];
  };
  const double s = score(3, 0);
  EXPECT_NEAR(score(10, 7), s, 1e-12);
  EXPECT_NEAR(score(1003, 1000), s, 1e-11);
  EXPECT_GT(std::abs(score(4, 0) - s), 1e-3);  // a different offset gives a different score
}

TEST(RopeTest, NegativePositionsRotateBack) {
  Generator gen(4);
  const Tensor x = randn({3, 6}, kFloat64, gen);
  const Tensor y = rope(rope(x, positions_of({5, 9, 2000})), positions_of({-5, -9, -2000}));
  EXPECT_THAT(as_doubles(y), Pointwise(DoubleNear(1e-12), as_doubles(x)));
}

TEST(RopeTest, PositionsBroadcastOverLeadingDims) {
  // x (B=2, H=3, T=4, D=6); positions (2, 1, 4): a different offset per sequence.
  Generator gen(5);
  const Tensor x = randn({2, 3, 4, 6}, kFloat64, gen);
  const Tensor pos = tensor(std::vector<int64_t>{0, 1, 2, 3, 10, 11, 12, 13}, {2, 1, 4});
  const Tensor y = rope(x, pos);
  for (int64_t b = 0; b < 2; ++b) {
    const Tensor expected = rope(x.select(0, b), positions_of(iota(4, 10 * b)));
    EXPECT_THAT(as_doubles(y.select(0, b)), Pointwise(DoubleNear(0), as_doubles(expected)));
  }
  // positions (T) is shared by every batch and head: the same as sequence 0 above.
  const Tensor y1 = rope(x, positions_of(iota(4)));
  EXPECT_THAT(as_doubles(y1.select(0, 0)), Pointwise(DoubleNear(0), as_doubles(y.select(0, 0))));
}

TEST(RopeTest, Float32AnglesAreComputedInDouble) {
  // Position 5000, first pair: the angle is 5000 rad. Computed in double and rounded once,
  // the float32 result is the float64 one to float32 precision (a float32 angle would be off by
  // up to 2^-11 ~ 5e-4 rad, and so would the output).
  Generator gen(6);
  const Tensor x = randn({1, 8}, kFloat64, gen);
  const Tensor y32 = rope(x.to(kFloat32), positions_of({5000}));
  const Tensor y64 = rope(x, positions_of({5000}));
  EXPECT_EQ(y32.dtype(), kFloat32);
  EXPECT_THAT(as_doubles(y32), Pointwise(DoubleNear(2e-6), as_doubles(y64)));
}

TEST(RopeTest, HalfInputsAreComputedInFloat32) {
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor x = tensor({1.0, 0.0, 0.5, 2.0}, {2, 2});
    const Tensor y = rope(x.to(dt), positions_of({3, 1000}));
    EXPECT_EQ(y.dtype(), dt);
    const Tensor expected = rope(x, positions_of({3, 1000})).to(dt);
    EXPECT_EQ(as_doubles(y), as_doubles(expected)) << dtype_name(dt);
    const Tensor xl = x.to(dt).requires_grad_();
    const Tensor dx = grad({rope(xl, positions_of({3, 1000}))}, {xl}, {ones({2, 2}, dt)})[0];
    EXPECT_EQ(dx.dtype(), dt);
  }
}

// ---------------------------------------------------------------- gradients
TEST(RopeTest, GradcheckShapes) {
  Generator gen(7);
  auto fn_for = [](std::vector<int64_t> p, double theta = 10000.0) {
    return [p, theta](const std::vector<Tensor>& in) { return rope(in[0], tensor(p), theta); };
  };
  EXPECT_GRADCHECK(fn_for({3}), {leaf({1, 2}, gen)});                        // one pair, T = 1
  EXPECT_GRADCHECK(fn_for({0, 1, 2}, 10.0), {leaf({3, 8}, gen)});            // 2-D
  EXPECT_GRADCHECK(fn_for({0, 5, 9, 40, 1000}), {leaf({2, 3, 5, 6}, gen)});  // (B, H, T, D)
  EXPECT_GRADCHECK(fn_for({7}), {leaf({4, 1, 4}, gen)});                     // T = 1, leading dims
  auto fn_b = [](const std::vector<Tensor>& in) {  // per-sequence positions (2, 1, 3)
    return rope(in[0], tensor(std::vector<int64_t>{0, 1, 2, 4, 5, 6}, {2, 1, 3}));
  };
  EXPECT_GRADCHECK(fn_b, {leaf({2, 2, 3, 4}, gen)});
}

TEST(RopeTest, GradcheckNonContiguous) {
  Generator gen(8);
  auto fn = [](const std::vector<Tensor>& in) { return rope(in[0], positions_of({0, 3, 8})); };
  const Tensor xt = swapped_leaf({6, 3}, 0, 1, gen);  // (3, 6), rows strided
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_GRADCHECK(fn, {xt});
  const Tensor xs = randn({3, 8}, kFloat64, gen).slice(1, 0, 8, 2).requires_grad_();  // (3, 4)
  ASSERT_FALSE(xs.is_contiguous());
  EXPECT_GRADCHECK(fn, {xs});
}

TEST(RopeTest, GradcheckComposedTwin) {
  Generator gen(9);
  auto fn = [](const std::vector<Tensor>& in) { return composed_rope(in[0], {0, 3, 8}, 10.0); };
  EXPECT_GRADCHECK(fn, {leaf({3, 6}, gen)});
  EXPECT_GRADCHECK(fn, {swapped_leaf({2, 6, 3}, 1, 2, gen)});
}

TEST(RopeTest, FusedAgreesWithComposed) {
  Generator gen(10);
  for (const Shape& shape : {Shape{1, 2}, Shape{7, 16}, Shape{2, 3, 5, 8}, Shape{4, 1, 130}}) {
    const int64_t t = shape[shape.size() - 2];
    const std::vector<int64_t> p = iota(t, 997);
    const Tensor x = leaf(shape, gen);
    const Tensor gout = randn(shape, kFloat64, gen);
    const Tensor fused = rope(x, positions_of(p)), composed = composed_rope(x, p);
    EXPECT_THAT(as_doubles(fused), Pointwise(DoubleNear(1e-12), as_doubles(composed))) << shape;
    const Tensor gf = grad({fused}, {x}, {gout})[0];
    const Tensor gc = grad({composed}, {x}, {gout})[0];
    EXPECT_THAT(as_doubles(gf), Pointwise(DoubleNear(1e-12), as_doubles(gc))) << shape;
  }
}

TEST(RopeTest, BackwardIsTheInverseRotation) {
  // dx = R(-a) dout: the gradient is rope of dout at the negated positions.
  Generator gen(11);
  const Tensor x = leaf({4, 8}, gen);
  const Tensor gout = randn({4, 8}, kFloat64, gen);
  const Tensor dx = grad({rope(x, positions_of({1, 2, 30, 400}))}, {x}, {gout})[0];
  const Tensor back = rope(gout, positions_of({-1, -2, -30, -400}));
  EXPECT_THAT(as_doubles(dx), Pointwise(DoubleNear(1e-15), as_doubles(back)));
}

TEST(RopeTest, SavesOnlyThePositions) {
  Generator gen(12);
  const Tensor y = rope(leaf({2, 3, 8}, gen), positions_of({0, 1, 2}));
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "rope");
  EXPECT_EQ(y.grad_fn()->saved_bytes(), 3u * 8u);  // three int64 positions, no x, no tables
}

// ---------------------------------------------------------------- errors
TEST(RopeTest, Errors) {
  const Tensor x = zeros({2, 3, 4}, kFloat32);
  const Tensor p = positions_of({0, 1, 2});
  EXPECT_TG_THROW(rope(zeros({2, 3, 5}), p), ShapeError, "rope", "must be even", "(2, 3, 5)",
                  "D = 5");
  EXPECT_TG_THROW(rope(x, tensor({0.f, 1.f, 2.f})), DTypeError, "rope", "positions", "int64",
                  "float32");
  EXPECT_TG_THROW(rope(x, positions_of({0, 1})), ShapeError, "rope", "T = 3", "(2)", "(2, 3, 4)");
  EXPECT_TG_THROW(rope(x, zeros({}, kInt64)), ShapeError, "rope", "T = 3", "()");
  EXPECT_TG_THROW(rope(x, tensor(std::vector<int64_t>(9, 0), {3, 3})), ShapeError, "rope",
                  "does not broadcast", "(3, 3)", "(2, 3)");
  EXPECT_TG_THROW(rope(x, tensor(std::vector<int64_t>(6, 0), {1, 2, 3})), ShapeError, "rope",
                  "does not broadcast", "(1, 2, 3)");
  EXPECT_TG_THROW(rope(x, p, 0.0), ValueError, "rope", "theta must be > 0", "0");
  EXPECT_TG_THROW(rope(x, p, -10.0), ValueError, "rope", "-10");
  EXPECT_TG_THROW(rope(zeros({4}), positions_of({0})), ShapeError, "rope", "at least 2 dims",
                  "(4)");
  EXPECT_TG_THROW(rope(zeros({3, 4}, kInt64), p), DTypeError, "rope", "floating point", "int64");
}

}  // namespace
}  // namespace tg
