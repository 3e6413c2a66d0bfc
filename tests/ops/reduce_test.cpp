// tests/ops/reduce_test.cpp — sum, mean, amax/amin, max/min: values, gradients, ties, errors.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace tg {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A 1-D float64 tensor from a vector.
Tensor vec64(std::initializer_list<double> values) { return tensor(std::vector<double>(values)); }

/// All values of t (any floating dtype) as doubles, row-major.
std::vector<double> values_of(const Tensor& t) { return t.to(kFloat64).to_vector<double>(); }

/// x = [[1, 2, 3], [4, 5, 6]] in the given dtype.
Tensor one_to_six(DType dtype = kFloat32) {
  return tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}).to(dtype);
}

/// d(sum(f(x)))/dx for a leaf x, via backward.
template <class F>
std::vector<double> grad_of(const Tensor& x, F f) {
  Tensor leaf = x.detach().clone().requires_grad_();
  backward(sum(f(leaf)));
  return values_of(leaf.grad());
}

// ---------------------------------------------------------------- sum
TEST(SumTest, AllElementsGiveAZeroDimTensor) {
  const Tensor s = sum(one_to_six());
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.dtype(), kFloat32);
  EXPECT_EQ(s.item<float>(), 21.0f);
}

TEST(SumTest, AStridedInputSumsExactlyLikeItsContiguousCopy) {
  // The layout never changes a result.
  Generator gen(51);
  for (const DType dt : {kFloat32, kFloat64}) {
    const Tensor m = randn({40, 3}, dt, gen).t();  // not contiguous
    ASSERT_FALSE(m.is_contiguous());
    EXPECT_EQ(values_of(sum(m)), values_of(sum(m.contiguous())));
    EXPECT_EQ(values_of(sum(m, {1})), values_of(sum(m.contiguous(), {1})));
  }
}

TEST(SumTest, AlongDims) {
  const Tensor x = one_to_six();
  EXPECT_THAT(values_of(sum(x, {0})), ElementsAre(5, 7, 9));
  EXPECT_THAT(values_of(sum(x, {1})), ElementsAre(6, 15));
  EXPECT_THAT(values_of(sum(x, {-1})), ElementsAre(6, 15));
  EXPECT_EQ(sum(x, {0, 1}).shape(), Shape{});
  EXPECT_EQ(sum(x, {0, 1}).item<float>(), 21.0f);
  EXPECT_EQ(sum(x, {1, 0}).item<float>(), 21.0f);
}

TEST(SumTest, KeepdimKeepsReducedDimsAsOnes) {
  const Tensor x = one_to_six();
  const Tensor s = sum(x, {1}, true);
  EXPECT_EQ(s.shape(), (Shape{2, 1}));
  EXPECT_THAT(values_of(s), ElementsAre(6, 15));
  EXPECT_EQ(sum(x, {0, 1}, true).shape(), (Shape{1, 1}));
}

TEST(SumTest, EmptyDimListReducesEverything) {
  // As PyTorch: sum(x, dim=[]) is the sum of all elements.
  const Tensor x = one_to_six();
  EXPECT_EQ(sum(x, {}).shape(), Shape{});
  EXPECT_EQ(sum(x, {}).item<float>(), 21.0f);
  EXPECT_EQ(sum(x, {}, true).shape(), (Shape{1, 1}));
}

TEST(SumTest, NonAdjacentDimsOfThreeD) {
  // x[a, b, c] = 12a + 4b + c; summing over a and c leaves 60 + 32b.
  const Tensor x = arange(24.0).reshape({2, 3, 4});
  const Tensor s = sum(x, {0, 2});
  EXPECT_EQ(s.shape(), Shape{3});
  EXPECT_THAT(values_of(s), ElementsAre(60, 92, 124));
  EXPECT_EQ(sum(x, {2, -3}, true).shape(), (Shape{1, 3, 1}));
}

TEST(SumTest, NonContiguousInput) {
  const Tensor x = one_to_six().t();  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_THAT(values_of(sum(x, {1})), ElementsAre(5, 7, 9));
  EXPECT_THAT(values_of(sum(x, {0})), ElementsAre(6, 15));
  const Tensor every_other = arange(10.0).slice(0, 0, 10, 2);  // 0 2 4 6 8
  EXPECT_EQ(sum(every_other).item<float>(), 20.0f);
}

TEST(SumTest, EmptyTensorsSumToZero) {
  EXPECT_EQ(sum(zeros({0, 3})).item<float>(), 0.0f);
  EXPECT_THAT(values_of(sum(zeros({0, 3}), {0})), ElementsAre(0, 0, 0));
  EXPECT_EQ(sum(zeros({0, 3}), {1}).shape(), Shape{0});
  EXPECT_THAT(values_of(sum(ones({2, 0}), {1})), ElementsAre(0, 0));
}

TEST(SumTest, ZeroDimTensorAcceptsDimZeroAndMinusOne) {
  const Tensor x = scalar_tensor(5.0);
  EXPECT_EQ(sum(x, {0}).shape(), Shape{});
  EXPECT_EQ(sum(x, {0}).item<float>(), 5.0f);
  EXPECT_EQ(sum(x, {-1}, true).shape(), Shape{});
  EXPECT_EQ(sum(x).item<float>(), 5.0f);
}

TEST(SumTest, HalfPrecisionAccumulatesInFloat) {
  // In float16 itself, 2048 + 1 rounds back to 2048 and the sum would stall there.
  EXPECT_EQ(sum(ones({4096}, kFloat16)).to(kFloat32).item<float>(), 4096.0f);
  EXPECT_EQ(sum(ones({4096}, kFloat16)).dtype(), kFloat16);
  // In bfloat16 the sum would stall at 256; 1000 is representable in bfloat16.
  EXPECT_EQ(sum(ones({1000}, kBFloat16)).to(kFloat32).item<float>(), 1000.0f);
  EXPECT_THAT(values_of(sum(one_to_six(kFloat16), {0})), ElementsAre(5, 7, 9));
  EXPECT_THAT(values_of(sum(one_to_six(kBFloat16), {1})), ElementsAre(6, 15));
}

TEST(SumTest, Float64AccumulatesInDouble) {
  // 1 + 1e-10 is 1 in float; double keeps it.
  const Tensor x = vec64({1.0, 1e-10});
  EXPECT_EQ(sum(x).dtype(), kFloat64);
  EXPECT_EQ(sum(x).item<double>(), 1.0 + 1e-10);
}

TEST(SumTest, BackwardSpreadsTheGradientOverTheReducedDims) {
  Tensor x = one_to_six().requires_grad_();
  const Tensor s = sum(x, {1});  // (2)
  backward(s, tensor({10.f, 20.f}));
  EXPECT_THAT(values_of(x.grad()), ElementsAre(10, 10, 10, 20, 20, 20));
  EXPECT_EQ(x.grad().dtype(), kFloat32);
}

TEST(SumTest, Gradcheck) {
  Generator gen(1);
  const Tensor a = randn({3, 4}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return sum(in[0], {1}); }, {a});
  EXPECT_GRADCHECK([](const auto& in) { return sum(in[0]); }, {a});
  // Size-1 dims, reduced and kept, and keepdim.
  const Tensor b = randn({2, 1, 3}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return sum(in[0], {0, 1}, true); }, {b});
  EXPECT_GRADCHECK([](const auto& in) { return sum(in[0], {-1}); }, {b});
  // Non-contiguous leaves: a transpose and a strided slice.
  const Tensor c = randn({4, 3}, kFloat64, gen).t().requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return sum(in[0], {0}); }, {c});
  const Tensor d = randn({6, 5}, kFloat64, gen).slice(1, 0, 5, 2).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return sum(in[0], {0, 1}, true); }, {d});
}

// ---------------------------------------------------------------- mean
TEST(MeanTest, Values) {
  const Tensor x = one_to_six();
  EXPECT_EQ(mean(x).shape(), Shape{});
  EXPECT_EQ(mean(x).item<float>(), 3.5f);
  EXPECT_THAT(values_of(mean(x, {1})), ElementsAre(2, 5));
  const Tensor m = mean(x, {0}, true);
  EXPECT_EQ(m.shape(), (Shape{1, 3}));
  EXPECT_THAT(values_of(m), ElementsAre(2.5, 3.5, 4.5));
  EXPECT_THAT(values_of(mean(x.t(), {-1})), ElementsAre(2.5, 3.5, 4.5));
}

TEST(MeanTest, HalfPrecisionAndBFloat16) {
  EXPECT_EQ(mean(one_to_six(kFloat16)).dtype(), kFloat16);
  EXPECT_EQ(mean(one_to_six(kFloat16)).to(kFloat32).item<float>(), 3.5f);
  EXPECT_THAT(values_of(mean(one_to_six(kBFloat16), {1})), ElementsAre(2, 5));
  // Accumulated in float: 4096 halves of 1 average to exactly 1.
  EXPECT_EQ(mean(ones({4096}, kFloat16)).to(kFloat32).item<float>(), 1.0f);
}

TEST(MeanTest, OfZeroElementsIsNaN) {
  // As PyTorch: the mean of nothing is 0 / 0, not an error.
  EXPECT_TRUE(std::isnan(mean(zeros({0})).item<float>()));
  const std::vector<double> rows = values_of(mean(zeros({2, 0}), {1}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(std::isnan(rows[0]) && std::isnan(rows[1]));
  EXPECT_EQ(mean(zeros({2, 0}), {0}).shape(), Shape{0});
}

TEST(MeanTest, BackwardDividesByTheCount) {
  // float32: 1 / 3 is computed in float.
  const std::vector<double> g = grad_of(one_to_six(), [](const Tensor& x) { return mean(x, {1}); });
  EXPECT_THAT(g, ::testing::Each(static_cast<double>(1.0f / 3.0f)));
  EXPECT_EQ(g.size(), 6u);
  EXPECT_THAT(grad_of(one_to_six(kFloat64), [](const Tensor& x) { return mean(x); }),
              ElementsAre(1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6));
}

TEST(MeanTest, Gradcheck) {
  Generator gen(2);
  const Tensor a = randn({3, 4}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return mean(in[0], {0}); }, {a});
  EXPECT_GRADCHECK([](const auto& in) { return mean(in[0]); }, {a});
  const Tensor b = randn({2, 1, 3}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return mean(in[0], {1, 2}, true); }, {b});
  const Tensor c = randn({4, 3}, kFloat64, gen).t().requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return mean(in[0], {-1}); }, {c});
}

// ---------------------------------------------------------------- amax, amin
TEST(AmaxTest, Values) {
  const Tensor x = tensor({1.f, -3.f, 2.f, 0.f, 5.f, 5.f}, {2, 3});
  EXPECT_THAT(values_of(amax(x, {1})), ElementsAre(2, 5));
  EXPECT_THAT(values_of(amin(x, {1})), ElementsAre(-3, 0));
  EXPECT_THAT(values_of(amax(x, {0})), ElementsAre(1, 5, 5));
  EXPECT_THAT(values_of(amin(x, {-2})), ElementsAre(0, -3, 2));
  EXPECT_EQ(amax(x).shape(), Shape{});
  EXPECT_EQ(amax(x).item<float>(), 5.0f);
  EXPECT_EQ(amin(x, {}).item<float>(), -3.0f);
  EXPECT_EQ(amax(x, {1}, true).shape(), (Shape{2, 1}));
  EXPECT_THAT(values_of(amax(x.t(), {0})), ElementsAre(2, 5));
}

TEST(AmaxTest, InfinitiesAndNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(amax(vec64({-inf, -inf})).item<double>(), -inf);
  EXPECT_EQ(amin(vec64({inf, inf})).item<double>(), inf);
  // NaN wins, as in PyTorch.
  EXPECT_TRUE(std::isnan(amax(vec64({1.0, kNaN, 3.0})).item<double>()));
  EXPECT_TRUE(std::isnan(amin(vec64({1.0, kNaN, 3.0})).item<double>()));
}

TEST(AmaxTest, HalfPrecisionAndBFloat16) {
  const Tensor x = tensor({1.5f, -3.f, 2.25f, 0.f, 5.f, 4.f}, {2, 3});
  EXPECT_EQ(amax(x.to(kFloat16), {1}).dtype(), kFloat16);
  EXPECT_THAT(values_of(amax(x.to(kFloat16), {1})), ElementsAre(2.25, 5));
  EXPECT_THAT(values_of(amin(x.to(kBFloat16), {0})), ElementsAre(0, -3, 2.25));
}

TEST(AmaxTest, TiesShareTheGradientEvenly) {
  // PyTorch's amax/amin backward: each of t tied extremes gets 1/t of the gradient.
  const Tensor x = tensor({1.f, 3.f, 3.f, 2.f, 2.f, 0.f}, {2, 3});
  EXPECT_THAT(grad_of(x, [](const Tensor& t) { return amax(t, {1}); }),
              ElementsAre(0, 0.5, 0.5, 0.5, 0.5, 0));
  EXPECT_THAT(grad_of(x, [](const Tensor& t) { return amax(t); }),
              ElementsAre(0, 0.5, 0.5, 0, 0, 0));
  EXPECT_THAT(grad_of(x, [](const Tensor& t) { return amin(t, {0}); }),
              ElementsAre(1, 0, 0, 0, 1, 1));
  const Tensor three = vec64({5.0, 5.0, 1.0, 5.0});
  const std::vector<double> g = grad_of(three, [](const Tensor& t) { return amax(t); });
  EXPECT_THAT(g, ElementsAre(1.0 / 3, 1.0 / 3, 0, 1.0 / 3));
}

TEST(AmaxTest, NaNTakesTheGradient) {
  // The NaNs are "the maximum": they share the gradient (as PyTorch's max(x) does).
  EXPECT_THAT(grad_of(vec64({1.0, kNaN, 3.0, kNaN}), [](const Tensor& t) { return amax(t); }),
              ElementsAre(0, 0.5, 0, 0.5));
}

TEST(AmaxTest, Gradcheck) {
  // randn values are distinct, so no tie is within eps of another element.
  Generator gen(3);
  const Tensor a = randn({3, 4}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return amax(in[0], {1}); }, {a});
  EXPECT_GRADCHECK([](const auto& in) { return amin(in[0], {0}, true); }, {a});
  EXPECT_GRADCHECK([](const auto& in) { return amax(in[0]); }, {a});
  const Tensor b = randn({2, 1, 3}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return amax(in[0], {1}); }, {b});
  EXPECT_GRADCHECK([](const auto& in) { return amin(in[0], {0, 2}); }, {b});
  const Tensor c = randn({4, 3}, kFloat64, gen).t().requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return amax(in[0], {-1}, true); }, {c});
  EXPECT_GRADCHECK([](const auto& in) { return amin(in[0]); }, {c});
}

// ---------------------------------------------------------------- max, min along a dim
TEST(MaxDimTest, ValuesAndIndices) {
  const Tensor x = tensor({1.f, 3.f, 3.f, 2.f, 2.f, 0.f}, {2, 3});
  const ValuesIndices mx = max(x, 1);
  EXPECT_EQ(mx.values.shape(), Shape{2});
  EXPECT_EQ(mx.indices.dtype(), kInt64);
  EXPECT_THAT(values_of(mx.values), ElementsAre(3, 2));
  EXPECT_THAT(mx.indices.to_vector<int64_t>(), ElementsAre(1, 0));
  const ValuesIndices mn = min(x, 1);
  EXPECT_THAT(values_of(mn.values), ElementsAre(1, 0));
  EXPECT_THAT(mn.indices.to_vector<int64_t>(), ElementsAre(0, 2));
  const ValuesIndices m0 = max(x, 0, true);
  EXPECT_EQ(m0.values.shape(), (Shape{1, 3}));
  EXPECT_EQ(m0.indices.shape(), (Shape{1, 3}));
  EXPECT_THAT(values_of(m0.values), ElementsAre(2, 3, 3));
  EXPECT_THAT(m0.indices.to_vector<int64_t>(), ElementsAre(1, 0, 0));
}

TEST(MaxDimTest, TiesReturnTheFirstOccurrence) {
  // Pinned against PyTorch on CPU: torch.max(tensor([1, 5, 5, 5, 2]), 0) -> (5, 1).
  const ValuesIndices r = max(tensor({1.f, 5.f, 5.f, 5.f, 2.f}), 0);
  EXPECT_EQ(r.values.item<float>(), 5.0f);
  EXPECT_EQ(r.indices.item<int64_t>(), 1);
  EXPECT_EQ(min(tensor({4.f, 0.f, 7.f, 0.f}), -1).indices.item<int64_t>(), 1);
  // The first NaN wins over every number.
  const ValuesIndices n = max(vec64({1.0, kNaN, 3.0, kNaN}), 0);
  EXPECT_TRUE(std::isnan(n.values.item<double>()));
  EXPECT_EQ(n.indices.item<int64_t>(), 1);
  EXPECT_EQ(min(vec64({1.0, -2.0, kNaN}), 0).indices.item<int64_t>(), 2);
}

TEST(MaxDimTest, GradientGoesOnlyToTheReturnedIndex) {
  // Even on ties (unlike amax): only x[indices] moves values, as in PyTorch.
  const Tensor x = tensor({1.f, 3.f, 3.f, 2.f, 2.f, 0.f}, {2, 3});
  EXPECT_THAT(grad_of(x, [](const Tensor& t) { return max(t, 1).values; }),
              ElementsAre(0, 1, 0, 1, 0, 0));
  EXPECT_THAT(grad_of(x, [](const Tensor& t) { return min(t, 1).values; }),
              ElementsAre(1, 0, 0, 0, 0, 1));
  EXPECT_THAT(grad_of(x, [](const Tensor& t) { return max(t, 0, true).values; }),
              ElementsAre(0, 1, 1, 1, 0, 0));
}

TEST(MaxDimTest, IndicesCarryNoGradient) {
  Tensor x = vec64({1.0, 2.0}).requires_grad_();
  const ValuesIndices r = max(x, 0);
  EXPECT_TRUE(r.values.requires_grad());
  EXPECT_FALSE(r.indices.requires_grad());
}

TEST(MaxDimTest, NonContiguousThreeDAndHalf) {
  // x[a, b, c] = 12a + 4b + c, permuted to (c, a, b): the max over a is at a = 1.
  const Tensor x = arange(24.0).reshape({2, 3, 4}).permute({2, 0, 1});
  const ValuesIndices r = max(x, 1);
  EXPECT_EQ(r.values.shape(), (Shape{4, 3}));
  EXPECT_EQ(r.values.at<float>({2, 1}), 12.f + 4.f + 2.f);
  EXPECT_THAT(r.indices.to_vector<int64_t>(), ::testing::Each(1));
  const ValuesIndices h = min(tensor({2.5f, -1.5f, 0.f}).to(kFloat16), 0);
  EXPECT_EQ(h.values.dtype(), kFloat16);
  EXPECT_EQ(h.values.to(kFloat32).item<float>(), -1.5f);
  EXPECT_EQ(h.indices.item<int64_t>(), 1);
  EXPECT_EQ(max(tensor({2.5f, -1.5f, 3.f}).to(kBFloat16), 0).indices.item<int64_t>(), 2);
}

TEST(MaxDimTest, ZeroDimAndEmptyOtherDims) {
  const ValuesIndices s = max(scalar_tensor(7.0), 0);
  EXPECT_EQ(s.values.shape(), Shape{});
  EXPECT_EQ(s.values.item<float>(), 7.0f);
  EXPECT_EQ(s.indices.item<int64_t>(), 0);
  // Reducing a non-empty dim of an empty tensor is fine (as PyTorch).
  const ValuesIndices e = max(zeros({0, 3}), 1);
  EXPECT_EQ(e.values.shape(), Shape{0});
  EXPECT_EQ(e.indices.shape(), Shape{0});
}

TEST(MaxDimTest, Gradcheck) {
  Generator gen(4);
  const auto values_max = [](int64_t dim, bool keepdim) {
    return [=](const std::vector<Tensor>& in) { return max(in[0], dim, keepdim).values; };
  };
  const auto values_min = [](int64_t dim, bool keepdim) {
    return [=](const std::vector<Tensor>& in) { return min(in[0], dim, keepdim).values; };
  };
  const Tensor a = randn({3, 4}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK(values_max(1, false), {a});
  EXPECT_GRADCHECK(values_min(0, true), {a});
  const Tensor b = randn({2, 1, 3}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK(values_max(1, false), {b});
  EXPECT_GRADCHECK(values_min(-1, true), {b});
  const Tensor c = randn({4, 3}, kFloat64, gen).t().requires_grad_();
  EXPECT_GRADCHECK(values_max(0, false), {c});
  EXPECT_GRADCHECK(values_min(1, false), {c});
}

// ---------------------------------------------------------------- max, min of everything
TEST(MaxAllTest, ValuesAndTiesSplitEvenly) {
  const Tensor x = tensor({1.f, 3.f, 3.f, 2.f, 2.f, 0.f}, {2, 3});
  EXPECT_EQ(max(x).shape(), Shape{});
  EXPECT_EQ(max(x).item<float>(), 3.0f);
  EXPECT_EQ(min(x).item<float>(), 0.0f);
  EXPECT_EQ(max(x.to(kFloat16)).to(kFloat32).item<float>(), 3.0f);
  EXPECT_EQ(min(x.to(kBFloat16)).to(kFloat32).item<float>(), 0.0f);
  // Pinned against PyTorch: torch.max(x).backward() splits among the tied maxima.
  EXPECT_THAT(grad_of(x, [](const Tensor& t) { return max(t); }),
              ElementsAre(0, 0.5, 0.5, 0, 0, 0));
  EXPECT_THAT(grad_of(x, [](const Tensor& t) { return min(t); }), ElementsAre(0, 0, 0, 0, 0, 1));
}

TEST(MaxAllTest, RecordsItsOwnName) {
  Tensor x = vec64({1.0, 2.0}).requires_grad_();
  EXPECT_EQ(max(x).grad_fn()->name(), "max");
  EXPECT_EQ(min(x).grad_fn()->name(), "min");
  EXPECT_EQ(amax(x).grad_fn()->name(), "amax");
  EXPECT_EQ(max(x, 0).values.grad_fn()->name(), "max");
}

TEST(MaxAllTest, Gradcheck) {
  Generator gen(5);
  const Tensor a = randn({3, 4}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return max(in[0]); }, {a});
  const Tensor b = randn({1, 5, 1}, kFloat64, gen).requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return min(in[0]); }, {b});
  const Tensor c = randn({4, 3}, kFloat64, gen).t().requires_grad_();
  EXPECT_GRADCHECK([](const auto& in) { return max(in[0]); }, {c});
}

// ---------------------------------------------------------------- errors
TEST(ReduceErrorTest, DimOutOfRange) {
  const Tensor x = zeros({2, 3});
  EXPECT_TG_THROW(sum(x, {2}), IndexError, "sum", "dim 2", "rank 2");
  EXPECT_TG_THROW(mean(x, {-3}), IndexError, "mean", "dim -3", "rank 2");
  EXPECT_TG_THROW(amax(x, {5}), IndexError, "amax", "dim 5");
  EXPECT_TG_THROW(amin(x, {5}), IndexError, "amin", "dim 5");
  EXPECT_TG_THROW(max(x, 2), IndexError, "max", "dim 2", "rank 2");
  EXPECT_TG_THROW(min(x, -3), IndexError, "min", "dim -3");
  EXPECT_TG_THROW(sum(scalar_tensor(1.0), {1}), IndexError, "sum", "dim 1", "rank 0");
}

TEST(ReduceErrorTest, DuplicateDims) {
  const Tensor x = zeros({2, 3});
  EXPECT_TG_THROW(sum(x, {0, -2}), ShapeError, "sum", "dim 0 appears more than once", "(0, -2)",
                  "(2, 3)");
  EXPECT_TG_THROW(mean(x, {1, 1}), ShapeError, "mean", "dim 1 appears more than once");
  EXPECT_TG_THROW(amax(x, {-1, 1}), ShapeError, "amax", "dim 1", "(-1, 1)");
  EXPECT_TG_THROW(amin(x, {0, 0}), ShapeError, "amin", "dim 0");
}

TEST(ReduceErrorTest, NonFloatingInput) {
  const Tensor ids = tensor({1, 2, 3}, {3});
  EXPECT_TG_THROW(sum(ids), DTypeError, "sum", "int64", "(3)");
  EXPECT_TG_THROW(mean(ids), DTypeError, "mean", "int64");
  EXPECT_TG_THROW(amax(ids), DTypeError, "amax", "int64");
  EXPECT_TG_THROW(amin(ids), DTypeError, "amin", "int64");
  EXPECT_TG_THROW(max(ids, 0), DTypeError, "max", "int64");
  EXPECT_TG_THROW(min(tensor({true, false}, {2}), 0), DTypeError, "min", "bool");
  EXPECT_TG_THROW(max(ids), DTypeError, "max", "int64");
  EXPECT_TG_THROW(min(ids), DTypeError, "min", "int64");
}

TEST(ReduceErrorTest, ExtremeOfNothing) {
  const Tensor e = zeros({0, 3});
  EXPECT_TG_THROW(amax(e, {0}), IndexError, "amax", "dim 0 of size 0", "(0, 3)");
  EXPECT_TG_THROW(amin(e), IndexError, "amin", "dim 0 of size 0", "(0, 3)");
  EXPECT_TG_THROW(max(e, 0), IndexError, "max", "dim 0 of size 0", "(0, 3)");
  EXPECT_TG_THROW(min(e, -2), IndexError, "min", "dim 0 of size 0");
  EXPECT_TG_THROW(max(e), IndexError, "max", "size 0", "(0, 3)");
  EXPECT_TG_THROW(min(zeros({3, 0})), IndexError, "min", "dim 1 of size 0", "(3, 0)");
  // Over the non-empty dim there is nothing to reduce per group, and nothing fails.
  EXPECT_EQ(amax(e, {1}).shape(), Shape{0});
}

}  // namespace
}  // namespace tg
