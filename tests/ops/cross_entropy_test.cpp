// tests/ops/cross_entropy_test.cpp — cross_entropy: values, reductions, ignore_index, label
// smoothing, stability, gradients (against finite differences and against the same math
// composed from primitives), dtypes, errors.
#include <cmath>
#include <limits>

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

/// cross_entropy composed from primitives: log_softmax as x - amax - log(sum(exp(...))),
/// then gather the target's log-probability, the smoothing term, masking and reduction.
Tensor composed_cross_entropy(const Tensor& x, const Tensor& t, const CrossEntropyOptions& o = {}) {
  const int64_t C = x.size(-1);
  const double e = o.label_smoothing;
  // Ignored positions: read class 0 instead (any valid class) and zero their loss after.
  std::vector<int64_t> safe = t.to_vector<int64_t>();
  std::vector<bool> ignored;
  int64_t count = 0;
  for (int64_t& v : safe) {
    ignored.push_back(v == o.ignore_index);
    if (ignored.back()) v = 0;
    else ++count;
  }
  const Tensor safe_t = tensor(safe, t.shape());
  const Tensor mask = tensor(std::vector<bool>(ignored.begin(), ignored.end()), t.shape());
  const Tensor z = sub(x, amax(x, {-1}, /*keepdim=*/true));
  const Tensor logp = sub(z, log(sum(exp(z), {-1}, /*keepdim=*/true)));
  const Tensor nll = neg(gather(logp, -1, safe_t.unsqueeze(-1))).squeeze(-1);
  const Tensor smooth = neg(sum(logp, {-1}));
  const Tensor per = masked_fill(add(mul(nll, 1 - e), mul(smooth, e / C)), mask, 0.0);
  if (o.reduction == "none") return per;
  if (o.reduction == "sum") return sum(per);
  return div(sum(per), static_cast<double>(count));
}

/// int64 targets in [0, C) of the given shape, with every `every`-th one set to `ignore`.
Tensor random_targets(const Shape& shape, int64_t C, Generator& gen, int64_t every = 0,
                      int64_t ignore = -100) {
  const Tensor u = rand(shape, kFloat64, gen);
  std::vector<int64_t> t;
  int64_t i = 0;
  for (double v : as_doubles(u)) {
    t.push_back(every > 0 && i++ % every == 1 ? ignore : static_cast<int64_t>(v * C));
  }
  return tensor(t, shape);
}

// ---------------------------------------------------------------- forward values
TEST(CrossEntropyTest, HandComputedValues) {
  // Row 0: exp(0, ln 3) = (1, 3), so p = (1/4, 3/4) and the target 1 costs -log(3/4).
  // Row 1: exp(ln 2, 0) = (2, 1), so p = (2/3, 1/3) and the target 0 costs -log(2/3).
  const Tensor x = tensor({0.0, std::log(3.0), std::log(2.0), 0.0}, {2, 2});
  const Tensor t = tensor({1, 0}, {2});
  const double l0 = -std::log(3 / 4.0), l1 = -std::log(2 / 3.0);
  EXPECT_NEAR(cross_entropy(x, t).item<double>(), (l0 + l1) / 2, 1e-15);
  EXPECT_NEAR(cross_entropy(x, t, {.reduction = "sum"}).item<double>(), l0 + l1, 1e-15);
  const Tensor none = cross_entropy(x, t, {.reduction = "none"});
  EXPECT_EQ(none.shape(), Shape{2});
  EXPECT_THAT(as_doubles(none), Pointwise(DoubleNear(1e-15), {l0, l1}));
  EXPECT_EQ(cross_entropy(x, t).shape(), Shape{});
}

TEST(CrossEntropyTest, BackwardIsSoftmaxMinusOneHot) {
  // p = (1/4, 3/4) and (2/3, 1/3); mean over 2 rows: dx = (p - onehot) / 2.
  const Tensor x = tensor({0.0, std::log(3.0), std::log(2.0), 0.0}, {2, 2}).requires_grad_();
  const Tensor t = tensor({1, 0}, {2});
  cross_entropy(x, t).backward();
  EXPECT_THAT(as_doubles(x.grad()),
              Pointwise(DoubleNear(1e-15), {0.125, -0.125, -1 / 6.0, 1 / 6.0}));
  // "none" with an upstream (2, -1): each row scaled by its own upstream value.
  const Tensor d = grad_of(cross_entropy(x, t, {.reduction = "none"}), x, tensor({2.0, -1.0}));
  EXPECT_THAT(as_doubles(d), Pointwise(DoubleNear(1e-15), {0.5, -0.5, 1 / 3.0, -1 / 3.0}));
}

TEST(CrossEntropyTest, LabelSmoothingByHand) {
  // e = 0.2, C = 2: q = (0.1, 0.9) for target 1; p = (1/4, 3/4).
  const Tensor x = tensor({0.0, std::log(3.0)}, {1, 2}).requires_grad_();
  const Tensor t = tensor({1}, {1});
  const Tensor loss = cross_entropy(x, t, {.label_smoothing = 0.2});
  EXPECT_NEAR(loss.item<double>(), -(0.1 * std::log(0.25) + 0.9 * std::log(0.75)), 1e-15);
  loss.backward();
  EXPECT_THAT(as_doubles(x.grad()), Pointwise(DoubleNear(1e-15), {0.15, -0.15}));  // p - q
  // e = 1: the target is ignored entirely, q is uniform.
  EXPECT_NEAR(cross_entropy(x, t, {.label_smoothing = 1.0}).item<double>(),
              -(0.5 * std::log(0.25) + 0.5 * std::log(0.75)), 1e-15);
}

TEST(CrossEntropyTest, IgnoreIndexMeanDividesByTheRest) {
  const Tensor x =
      tensor({0.0, std::log(3.0), 5.0, -5.0, std::log(2.0), 0.0}, {3, 2}).requires_grad_();
  const Tensor t = tensor({1, -100, 0}, {3});
  const double l0 = -std::log(3 / 4.0), l2 = -std::log(2 / 3.0);
  EXPECT_NEAR(cross_entropy(x, t).item<double>(), (l0 + l2) / 2, 1e-15);  // 2, not 3
  EXPECT_THAT(as_doubles(cross_entropy(x, t, {.reduction = "none"})),
              Pointwise(DoubleNear(1e-15), {l0, 0.0, l2}));
  cross_entropy(x, t).backward();
  EXPECT_THAT(as_doubles(x.grad()),
              Pointwise(DoubleNear(1e-15), {0.125, -0.125, 0.0, 0.0, -1 / 6.0, 1 / 6.0}));
  // ignore_index may be a valid class: here class 0 rows are skipped.
  EXPECT_NEAR(cross_entropy(x, tensor({1, 0, 0}, {3}), {.ignore_index = 0}).item<double>(), l0,
              1e-15);
  // With smoothing, ignored rows stay 0 (PyTorch masks the smoothing term too).
  const Tensor ls = cross_entropy(x, t, {.reduction = "none", .label_smoothing = 0.3});
  EXPECT_EQ(as_doubles(ls)[1], 0.0);
}

// The convention where the loss is undefined: every target ignored. As PyTorch 1.13,
// "mean" is 0 / 0 = NaN, yet its gradient is all zeros (no row contributes); "sum" is 0.
TEST(CrossEntropyTest, AllIgnoredMeanIsNaNWithZeroGradient) {
  const Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}).requires_grad_();
  const Tensor t = tensor({-100, -100}, {2});
  for (double e : {0.0, 0.1}) {
    const Tensor loss = cross_entropy(x, t, {.label_smoothing = e});
    EXPECT_TRUE(std::isnan(loss.item<double>()));
    EXPECT_THAT(as_doubles(grad_of(loss, x, scalar_tensor(1.0, kFloat64))), Each(0.0));
    const Tensor s = cross_entropy(x, t, {.reduction = "sum", .label_smoothing = e});
    EXPECT_EQ(s.item<double>(), 0.0);
    EXPECT_THAT(as_doubles(grad_of(s, x, scalar_tensor(1.0, kFloat64))), Each(0.0));
  }
}

TEST(CrossEntropyTest, LargeLogitsDoNotOverflow) {
  // exp(1000) = inf; with the max subtracted: loss(t = 0) = log(1 + e^-1000 + e^-2000) ~ 0,
  // loss(t = 1) = 1000, loss(t = 2) = 2000.
  for (DType dt : {kFloat64, kFloat32}) {
    const Tensor x =
        tensor({1000.0, 0.0, -1000.0, 1000.0, 0.0, -1000.0, 1000.0, 0.0, -1000.0}, {3, 3})
            .to(dt)
            .requires_grad_();
    const Tensor loss = cross_entropy(x, tensor({0, 1, 2}, {3}), {.reduction = "none"});
    EXPECT_THAT(as_doubles(loss), Pointwise(DoubleNear(1e-3), {0.0, 1000.0, 2000.0}))
        << dtype_name(dt);
    loss.backward(ones({3}, dt));
    // p = (1, 0, 0) for every row: dx = p - onehot.
    EXPECT_THAT(as_doubles(x.grad()),
                Pointwise(DoubleNear(1e-12), {0.0, 0.0, 0.0, 1.0, -1.0, 0.0, 1.0, 0.0, -1.0}))
        << dtype_name(dt);
  }
}

TEST(CrossEntropyTest, OneDimLogitsTakeAZeroDimTarget) {
  const Tensor x = tensor({0.0, std::log(3.0)}).requires_grad_();
  const Tensor loss = cross_entropy(x, scalar_tensor(1, kInt64), {.reduction = "none"});
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_NEAR(loss.item<double>(), -std::log(0.75), 1e-15);
  EXPECT_GRADCHECK(
      [](const std::vector<Tensor>& in) { return cross_entropy(in[0], scalar_tensor(0, kInt64)); },
      {x});
}

TEST(CrossEntropyTest, ClassDimIsLastForThreeDLogits) {
  // (B, T, V) = (2, 3, 5) with targets (2, 3), as a language model's head produces them;
  // the same as the flattened (6, 5) rows.
  Generator gen(1);
  const Tensor x = randn({2, 3, 5}, kFloat64, gen);
  const Tensor t = random_targets({2, 3}, 5, gen);
  const Tensor none = cross_entropy(x, t, {.reduction = "none"});
  EXPECT_EQ(none.shape(), (Shape{2, 3}));
  EXPECT_EQ(as_doubles(none),
            as_doubles(cross_entropy(x.reshape({6, 5}), t.reshape({6}), {.reduction = "none"})));
}

TEST(CrossEntropyTest, Float32AndHalfValues) {
  const Tensor t = tensor({1, 0}, {2});
  const std::vector<double> x = {0.0, std::log(3.0), std::log(2.0), 0.0};
  const double expected = (-std::log(0.75) - std::log(2 / 3.0)) / 2;
  for (DType dt : {kFloat32, kFloat16, kBFloat16}) {
    const Tensor xd = tensor(x, {2, 2}).to(dt).requires_grad_();
    const Tensor loss = cross_entropy(xd, t);
    EXPECT_EQ(loss.dtype(), dt);
    const double tol = dt == kFloat32 ? 1e-6 : 1e-2;
    EXPECT_NEAR(as_doubles(loss)[0], expected, tol) << dtype_name(dt);
    loss.backward();
    EXPECT_EQ(xd.grad().dtype(), dt);
    EXPECT_THAT(as_doubles(xd.grad()),
                Pointwise(DoubleNear(tol), {0.125, -0.125, -1 / 6.0, 1 / 6.0}))
        << dtype_name(dt);
  }
}

TEST(CrossEntropyTest, SavesLogitsTargetsAndOneNumberPerRow) {
  Generator gen(2);
  const Tensor x = leaf({4, 7}, gen);
  const Tensor loss = cross_entropy(x, random_targets({4}, 7, gen));
  ASSERT_NE(loss.grad_fn(), nullptr);
  EXPECT_EQ(loss.grad_fn()->name(), "cross_entropy");
  // logits (28) + targets (4, int64) + lse (4): no (4, 7) probability tensor.
  EXPECT_EQ(loss.grad_fn()->saved_bytes(), (28u + 4u + 4u) * 8u);
}

// ---------------------------------------------------------------- gradients
TEST(CrossEntropyTest, GradcheckShapesReductionsAndOptions) {
  Generator gen(3);
  const std::vector<CrossEntropyOptions> options = {
      {},
      {.reduction = "sum"},
      {.reduction = "none"},
      {.label_smoothing = 0.1},
      {.ignore_index = 2, .reduction = "none", .label_smoothing = 0.25}};
  for (const Shape& shape : {Shape{1, 7}, Shape{5, 129}, Shape{4, 1}, Shape{2, 3, 5}}) {
    const int64_t C = shape.back();
    Shape tshape = shape;
    tshape.erase(tshape.size() - 1);
    for (const CrossEntropyOptions& o : options) {
      const Tensor t = random_targets(tshape, C, gen, 3, o.ignore_index);
      auto fn = [t, o](const std::vector<Tensor>& in) { return cross_entropy(in[0], t, o); };
      EXPECT_GRADCHECK(fn, {leaf(shape, gen)}) << fmt::format("{} {}", shape, o.reduction);
    }
  }
}

TEST(CrossEntropyTest, GradcheckNonContiguous) {
  Generator gen(4);
  const Tensor xt = swapped_leaf({7, 4}, 0, 1, gen);  // (4, 7), classes strided
  ASSERT_FALSE(xt.is_contiguous());
  const Tensor xs = randn({3, 14}, kFloat64, gen).slice(1, 0, 14, 2).requires_grad_();
  ASSERT_FALSE(xs.is_contiguous());
  const Tensor t4 = random_targets({4}, 7, gen), t3 = random_targets({3}, 7, gen, 2);
  // A non-contiguous targets tensor too: every other element of a longer one.
  const Tensor t3s = random_targets({6}, 7, gen).slice(0, 0, 6, 2);
  for (const CrossEntropyOptions& o :
       {CrossEntropyOptions{}, CrossEntropyOptions{.reduction = "none", .label_smoothing = 0.3}}) {
    EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t4, o); },
                     {xt});
    EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t3, o); },
                     {xs});
    EXPECT_GRADCHECK([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t3s, o); },
                     {xs});
  }
}

TEST(CrossEntropyTest, GradcheckComposedTwin) {
  Generator gen(5);
  const Tensor t = random_targets({3}, 7, gen, 2);
  EXPECT_GRADCHECK(
      [t](const std::vector<Tensor>& in) {
        return composed_cross_entropy(in[0], t, {.label_smoothing = 0.2});
      },
      {leaf({3, 7}, gen)});
}

TEST(CrossEntropyTest, FusedAgreesWithComposed) {
  Generator gen(6);
  for (const Shape& shape : {Shape{1, 7}, Shape{6, 129}, Shape{2, 3, 4}, Shape{5}}) {
    const int64_t C = shape.back();
    Shape tshape = shape;
    tshape.erase(tshape.size() - 1);
    const Tensor t = random_targets(tshape, C, gen, 3);
    for (const char* red : {"mean", "sum", "none"}) {
      for (double e : {0.0, 0.1}) {
        const CrossEntropyOptions o{.reduction = red, .label_smoothing = e};
        const Tensor x = leaf(shape, gen);
        const Tensor fused = cross_entropy(x, t, o), composed = composed_cross_entropy(x, t, o);
        const Tensor gout = randn(fused.shape(), kFloat64, gen);
        const std::string what = fmt::format("{} {} e={}", shape, red, e);
        EXPECT_THAT(as_doubles(fused), Pointwise(DoubleNear(1e-12), as_doubles(composed))) << what;
        EXPECT_THAT(as_doubles(grad_of(fused, x, gout)),
                    Pointwise(DoubleNear(1e-12), as_doubles(grad_of(composed, x, gout))))
            << what;
      }
    }
  }
}

// ---------------------------------------------------------------- errors
TEST(CrossEntropyTest, Errors) {
  const Tensor x = zeros({2, 3, 4});
  const Tensor t = zeros({2, 3}, kInt64);
  EXPECT_TG_THROW(cross_entropy(x, zeros({2, 3})), DTypeError, "cross_entropy", "targets", "int64",
                  "float32", "(2, 3)");
  EXPECT_TG_THROW(cross_entropy(zeros({2, 4}, kInt64), zeros({2}, kInt64)), DTypeError,
                  "cross_entropy", "logits", "floating point", "int64");
  EXPECT_TG_THROW(cross_entropy(x, zeros({2, 4}, kInt64)), ShapeError, "cross_entropy",
                  "targets (2, 4)", "logits (2, 3, 4)", "(2, 3)", "last");
  EXPECT_TG_THROW(cross_entropy(x, zeros({2, 3, 4}, kInt64)), ShapeError, "cross_entropy",
                  "(2, 3, 4)");
  EXPECT_TG_THROW(cross_entropy(zeros({}), zeros({}, kInt64)), ShapeError, "cross_entropy",
                  "at least 1 dim", "()");
  EXPECT_TG_THROW(cross_entropy(zeros({2, 0}), zeros({2}, kInt64)), ShapeError, "cross_entropy",
                  "(2, 0)", "C = 0");
  EXPECT_TG_THROW(cross_entropy(x, t, {.reduction = "avg"}), ValueError, "cross_entropy",
                  "reduction", "\"avg\"");
  EXPECT_TG_THROW(cross_entropy(x, t, {.label_smoothing = -0.1}), ValueError, "cross_entropy",
                  "label_smoothing", "-0.1");
  EXPECT_TG_THROW(cross_entropy(x, t, {.label_smoothing = 1.5}), ValueError, "cross_entropy",
                  "1.5");
  EXPECT_TG_THROW(cross_entropy(x, t, {.label_smoothing = std::nan("")}), ValueError,
                  "cross_entropy", "nan");
}

TEST(CrossEntropyTest, TargetOutOfRangeNamesValuePositionAndC) {
  const Tensor x = zeros({2, 3, 4}, kFloat64).requires_grad_();
  EXPECT_TG_THROW(cross_entropy(x, tensor({0, 1, 2, 3, 0, 4}, {2, 3})), IndexError, "cross_entropy",
                  "target 4", "position (1, 2)", "C = 4", "[0, 4)");
  EXPECT_TG_THROW(cross_entropy(x, tensor({0, -1, 2, 3, 0, 1}, {2, 3})), IndexError,
                  "cross_entropy", "target -1", "position (0, 1)", "ignore_index -100");
  // A huge value is refused before it is used as an offset (no wild read).
  EXPECT_TG_THROW(
      cross_entropy(x, tensor(std::vector<int64_t>{0, 1, 2, 3, 0, int64_t{1} << 62}, {2, 3})),
      IndexError, "cross_entropy", "4611686018427387904");
  // -100 is fine by default, but not once ignore_index is something else.
  const Tensor t = tensor({0, 1, 2, 3, 0, -100}, {2, 3});
  EXPECT_NO_THROW(cross_entropy(x, t));
  EXPECT_TG_THROW(cross_entropy(x, t, {.ignore_index = 0}), IndexError, "cross_entropy",
                  "target -100", "position (1, 2)", "ignore_index 0");
  EXPECT_TG_THROW(cross_entropy(zeros({3}), scalar_tensor(3, kInt64)), IndexError, "cross_entropy",
                  "target 3", "position ()", "C = 3");
}

TEST(CrossEntropyTest, MinusInfinityLogitIsAMaskedClassNotANaN) {
  // A masked class (logit -inf) has probability 0; the loss stays finite, as in PyTorch:
  // log(e^1 + e^2) - 1 = log(1 + e). (Smoothing would give it weight e / C: then +inf.)
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = tensor({1.0, -inf, 2.0}, {1, 3}).requires_grad_();
  const Tensor loss = cross_entropy(x, tensor({0}, {1}));
  EXPECT_NEAR(loss.item<double>(), std::log1p(std::exp(1.0)), 1e-15);
  loss.backward();
  EXPECT_THAT(as_doubles(x.grad()),
              Pointwise(DoubleNear(1e-15),
                        {1 / (1 + std::exp(1.0)) - 1, 0.0, std::exp(1.0) / (1 + std::exp(1.0))}));
  EXPECT_EQ(cross_entropy(x, tensor({0}, {1}), {.label_smoothing = 0.1}).item<double>(), inf);
}

}  // namespace
}  // namespace tg
