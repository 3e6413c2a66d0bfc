// tests/core/factories_test.cpp — empty/zeros/ones/full, *_like, arange, linspace, eye, tensor.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::IsEmpty;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using ::tg::testing::as_doubles;
using ::tg::testing::kAllDTypes;

// A fresh tensor owns its storage alone, starts at offset 0 and is row-major.
void expect_fresh(const Tensor& t, const Shape& shape, DType dtype) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.dtype(), dtype);
  EXPECT_EQ(t.strides(), contiguous_strides(shape));
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.requires_grad());
  EXPECT_EQ(t.storage().use_count(), 1);
  EXPECT_GE(t.storage()->nbytes(), static_cast<size_t>(t.numel()) * element_size(dtype));
}

// ---- empty, zeros, ones, full

TEST(FactoriesTest, DefaultDTypeIsFloat32) {
  EXPECT_EQ(empty({2}).dtype(), kFloat32);
  EXPECT_EQ(zeros({2}).dtype(), kFloat32);
  EXPECT_EQ(ones({2}).dtype(), kFloat32);
  EXPECT_EQ(full({2}, 1.0).dtype(), kFloat32);
  EXPECT_EQ(arange(3).dtype(), kFloat32);
  EXPECT_EQ(linspace(0, 1, 2).dtype(), kFloat32);
  EXPECT_EQ(eye(2).dtype(), kFloat32);
  EXPECT_EQ(scalar_tensor(1.0).dtype(), kFloat32);
}

TEST(FactoriesTest, EmptyHasTheShapeAndDTypeOfEveryDType) {
  for (DType dt : kAllDTypes) {
    Tensor t = empty({2, 3, 4}, dt);
    expect_fresh(t, {2, 3, 4}, dt);
    EXPECT_EQ(t.numel(), 24);
  }
}

TEST(FactoriesTest, EmptyWritesAndReadsBack) {
  Tensor t = empty({3}, kInt64);
  t.data<int64_t>()[0] = 1;
  t.data<int64_t>()[1] = 2;
  t.data<int64_t>()[2] = 3;
  EXPECT_THAT(t.to_vector<int64_t>(), ElementsAre(1, 2, 3));
}

TEST(FactoriesTest, ZerosOfEveryDType) {
  for (DType dt : kAllDTypes) {
    Tensor t = zeros({2, 3}, dt);
    expect_fresh(t, {2, 3}, dt);
    EXPECT_THAT(as_doubles(t), Each(0.0)) << dtype_name(dt);
    EXPECT_EQ(as_doubles(t).size(), 6u);
  }
}

TEST(FactoriesTest, ZerosIsPositiveZero) {
  EXPECT_FALSE(std::signbit(zeros({1}).item<float>()));
  EXPECT_FALSE(std::signbit(zeros({1}, kFloat64).item<double>()));
}

TEST(FactoriesTest, OnesOfEveryDType) {
  for (DType dt : kAllDTypes) {
    Tensor t = ones({4}, dt);
    expect_fresh(t, {4}, dt);
    EXPECT_THAT(as_doubles(t), ElementsAre(1.0, 1.0, 1.0, 1.0)) << dtype_name(dt);
  }
}

TEST(FactoriesTest, FullOfEveryDTypeConvertsTheValue) {
  EXPECT_THAT(full({2}, -1.25, kFloat32).to_vector<float>(), ElementsAre(-1.25f, -1.25f));
  EXPECT_THAT(full({2}, 0.1, kFloat64).to_vector<double>(), ElementsAre(0.1, 0.1));
  EXPECT_THAT(as_doubles(full({2}, 0.1, kFloat16)), Each(0.0999755859375));
  EXPECT_THAT(as_doubles(full({2}, 0.1, kBFloat16)), Each(0.10009765625));
  EXPECT_THAT(full({2}, -3.9, kInt64).to_vector<int64_t>(), ElementsAre(-3, -3));
  EXPECT_THAT(full({2}, -3.9, kBool).to_vector<bool>(), ElementsAre(true, true));
  EXPECT_THAT(full({2}, 0.0, kBool).to_vector<bool>(), ElementsAre(false, false));
}

TEST(FactoriesTest, FullWithNonFiniteValues) {
  EXPECT_THAT(full({2}, kInf).to_vector<float>(), Each(std::numeric_limits<float>::infinity()));
  EXPECT_TRUE(std::isnan(full({}, kNaN, kFloat64).item<double>()));
}

TEST(FactoriesTest, ZeroDimAndEmptyShapes) {
  Tensor s = full({}, 4.0, kInt64);
  expect_fresh(s, {}, kInt64);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<int64_t>(), 4);
  for (DType dt : kAllDTypes) {
    Tensor e = ones({2, 0, 3}, dt);
    expect_fresh(e, {2, 0, 3}, dt);
    EXPECT_EQ(e.numel(), 0);
    EXPECT_THAT(as_doubles(e), IsEmpty());
  }
}

TEST(FactoriesTest, EmptyShapeKeepsStridesPositive) {
  // Like PyTorch, a size-0 dim counts as 1 in the strides of the dims before it.
  EXPECT_EQ(zeros({2, 0, 3}).strides(), Strides({3, 3, 1}));
  EXPECT_EQ(zeros({0, 4}).strides(), Strides({4, 1}));
}

TEST(FactoriesTest, RankAboveInlineCapacity) {
  Shape shape(10, 1);
  shape[0] = 2;
  shape[9] = 3;
  Tensor t = ones(shape, kInt64);
  EXPECT_EQ(t.dim(), 10u);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.stride(0), 3);
  EXPECT_THAT(t.to_vector<int64_t>(), Each(1));
}

TEST(FactoriesTest, NegativeSizeNamesTheSize) {
  EXPECT_TG_THROW(zeros({3, -2}), ShapeError, "negative size -2", "dim 1", "(3, -2)");
  EXPECT_TG_THROW(empty({-1}), ShapeError, "empty", "negative size -1");
  EXPECT_TG_THROW(full({-5, 2}, 1.0, kInt64), ShapeError, "negative size -5", "(-5, 2)");
  EXPECT_TG_THROW(tensor({1.f}, {-1}), ShapeError, "tensor", "negative size -1");
}

TEST(FactoriesTest, NumelOverflowNamesTheShape) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_TG_THROW(zeros({big, big}), ShapeError, "(1099511627776, 1099511627776)",
                  "more elements than int64");
  EXPECT_TG_THROW(empty({big, 2, big}, kInt64), ShapeError, "(1099511627776, 2, 1099511627776)");
}

TEST(FactoriesTest, ZeroSizedShapeWithOverflowingStridesIsAShapeError) {
  // numel is 0, but the strides of the leading dims would be 2^80: refuse, never wrap.
  const int64_t big = int64_t{1} << 40;
  EXPECT_TG_THROW(zeros({0, big, big}), ShapeError, "(0, 1099511627776, 1099511627776)",
                  "overflow");
  EXPECT_TG_THROW(empty({big, 0, big, big}, kBool), ShapeError, "(1099511627776, 0, ", "overflow");
}

TEST(FactoriesTest, ZeroSizedShapeWithHugeDimsThatFitIsFine) {
  const int64_t big = int64_t{1} << 40;
  Tensor t = zeros({big, 0});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.strides(), Strides({1, 1}));
  Tensor u = zeros({0, big});
  EXPECT_EQ(u.strides(), Strides({big, 1}));
}

TEST(FactoriesTest, BytesOverflowingSizeTIsAShapeError) {
  // 2^62 float64 elements fit in int64 but need 2^65 bytes.
  EXPECT_TG_THROW(empty({int64_t{1} << 62}, kFloat64), ShapeError, "empty", "(4611686018427387904)",
                  "float64");
}

TEST(FactoriesTest, UnsatisfiableAllocationThrowsInsteadOfCrashing) {
  // 2^60 float32 elements = 2^62 bytes: a valid shape no machine can back. Either error
  // kind is acceptable; a crash or a null data pointer is not.
  const int64_t n = int64_t{1} << 60;
  try {
    Tensor t = empty({n}, kFloat32);
    FAIL() << "allocating 2^62 bytes succeeded";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("4611686018427387904"));
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("1152921504606846976"));
  }
  EXPECT_THROW(zeros({n}, kInt64), Error);
  EXPECT_THROW(ones({n, 4}, kBool), Error);
}

// ---- *_like

TEST(FactoriesTest, LikeFactoriesCopyShapeAndDType) {
  Tensor like = zeros({2, 3}, kInt64);
  Tensor e = empty_like(like);
  expect_fresh(e, {2, 3}, kInt64);
  EXPECT_NE(e.storage(), like.storage());
  Tensor z = zeros_like(like);
  expect_fresh(z, {2, 3}, kInt64);
  EXPECT_THAT(z.to_vector<int64_t>(), Each(0));
  Tensor o = ones_like(like);
  expect_fresh(o, {2, 3}, kInt64);
  EXPECT_THAT(o.to_vector<int64_t>(), Each(1));
  Tensor f = full_like(like, 7.5);
  expect_fresh(f, {2, 3}, kInt64);
  EXPECT_THAT(f.to_vector<int64_t>(), Each(7));
}

TEST(FactoriesTest, LikeFactoriesWithAnExplicitDType) {
  Tensor like = zeros({4, 1}, kInt64);
  expect_fresh(empty_like(like, kFloat16), {4, 1}, kFloat16);
  Tensor z = zeros_like(like, kFloat64);
  expect_fresh(z, {4, 1}, kFloat64);
  EXPECT_THAT(z.to_vector<double>(), Each(0.0));
  Tensor o = ones_like(like, kBool);
  expect_fresh(o, {4, 1}, kBool);
  EXPECT_THAT(o.to_vector<bool>(), Each(true));
  Tensor f = full_like(like, 7.5, kFloat32);
  expect_fresh(f, {4, 1}, kFloat32);
  EXPECT_THAT(f.to_vector<float>(), Each(7.5f));
}

TEST(FactoriesTest, LikeOfAViewIsContiguousAndDoesNotCopyRequiresGrad) {
  Tensor base = zeros({2, 3});
  base.requires_grad_();
  Tensor z = zeros_like(base.t());
  expect_fresh(z, {3, 2}, kFloat32);
  EXPECT_FALSE(ones_like(base).requires_grad());
}

// ---- arange

TEST(FactoriesTest, ArangeCountsUpToButExcludingEnd) {
  EXPECT_THAT(arange(5).to_vector<float>(), ElementsAre(0.f, 1.f, 2.f, 3.f, 4.f));
  EXPECT_THAT(arange(2, 5).to_vector<float>(), ElementsAre(2.f, 3.f, 4.f));
  EXPECT_THAT(arange(0, 10, 3).to_vector<float>(), ElementsAre(0.f, 3.f, 6.f, 9.f));
  EXPECT_THAT(arange(-1, 1, 0.5).to_vector<float>(), ElementsAre(-1.f, -0.5f, 0.f, 0.5f));
}

TEST(FactoriesTest, ArangeLengthIsCeilOfRangeOverStep) {
  Tensor t = arange(0, 1, 0.3);
  EXPECT_EQ(t.shape(), Shape({4}));
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(0.f, 0.3f, FloatEq(0.6f), FloatEq(0.9f)));
  EXPECT_EQ(arange(0, 1, 0.1).numel(), 10);
  EXPECT_EQ(arange(1, 2.5, 0.5).numel(), 3);
  EXPECT_EQ(arange(0, 1.01, 0.5).numel(), 3);
}

TEST(FactoriesTest, ArangeWithNegativeStep) {
  EXPECT_THAT(arange(10, 0, -3).to_vector<float>(), ElementsAre(10.f, 7.f, 4.f, 1.f));
  EXPECT_THAT(arange(5, 0, -1.5).to_vector<float>(), ElementsAre(5.f, 3.5f, 2.f, 0.5f));
  EXPECT_THAT(arange(0, -3, -1, kInt64).to_vector<int64_t>(), ElementsAre(0, -1, -2));
}

TEST(FactoriesTest, ArangeWithStartEqualToEndIsEmpty) {
  Tensor t = arange(1, 1);
  EXPECT_EQ(t.shape(), Shape({0}));
  EXPECT_EQ(arange(3, 3, -1).numel(), 0);
  EXPECT_EQ(arange(0).numel(), 0);
}

TEST(FactoriesTest, ArangeInEveryDType) {
  Tensor i = arange(0, 5, 1, kInt64);
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_THAT(i.to_vector<int64_t>(), ElementsAre(0, 1, 2, 3, 4));
  Tensor j = arange(4, kInt64);
  EXPECT_THAT(j.to_vector<int64_t>(), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(arange(0, 1, 0.25, kFloat64).to_vector<double>(), ElementsAre(0, 0.25, 0.5, 0.75));
  EXPECT_THAT(as_doubles(arange(3, kFloat16)), ElementsAre(0, 1, 2));
  EXPECT_THAT(as_doubles(arange(3, kBFloat16)), ElementsAre(0, 1, 2));
}

TEST(FactoriesTest, ArangeValuesAreStartPlusIndexTimesStep) {
  // Computed from the index, not accumulated: no drift over many steps.
  Tensor t = arange(0, 100, 0.1, kFloat64);
  ASSERT_EQ(t.numel(), 1000);
  EXPECT_EQ(t.at<double>({999}), 999 * 0.1);
  EXPECT_EQ(t.at<double>({500}), 500 * 0.1);
}

TEST(FactoriesTest, ArangeWithZeroStepIsAValueError) {
  EXPECT_TG_THROW(arange(0, 5, 0), ValueError, "arange", "step", "0");
}

TEST(FactoriesTest, ArangeInTheWrongDirectionIsAValueError) {
  EXPECT_TG_THROW(arange(0, 5, -1), ValueError, "arange", "step -1", "start 0", "end 5");
  EXPECT_TG_THROW(arange(5, 0, 1), ValueError, "arange", "step 1", "start 5", "end 0");
  EXPECT_TG_THROW(arange(-3), ValueError, "arange", "end -3");
}

TEST(FactoriesTest, ArangeWithNonFiniteArgumentsIsAValueError) {
  EXPECT_TG_THROW(arange(0, kInf), ValueError, "arange", "finite", "inf");
  EXPECT_TG_THROW(arange(kNaN, 1), ValueError, "arange", "finite", "nan");
  EXPECT_TG_THROW(arange(-kInf, 0), ValueError, "arange", "finite", "-inf");
  EXPECT_TG_THROW(arange(0, 1, kNaN), ValueError, "arange", "step", "nan");
  EXPECT_TG_THROW(arange(0, 1, kInf), ValueError, "arange", "step", "inf");
}

TEST(FactoriesTest, ArangeWithTooManyElementsThrows) {
  EXPECT_TG_THROW(arange(0, 1e300), ValueError, "arange", "too many");
  EXPECT_THROW(arange(0, 1e18, 1, kFloat64), Error);  // 8e18 bytes: cannot be allocated
}

// ---- linspace

TEST(FactoriesTest, LinspaceHitsBothEndsExactly) {
  EXPECT_THAT(linspace(0, 1, 5).to_vector<float>(), ElementsAre(0.f, 0.25f, 0.5f, 0.75f, 1.f));
  Tensor t = linspace(0.1, 0.7, 7, kFloat64);
  ASSERT_EQ(t.numel(), 7);
  EXPECT_EQ(t.at<double>({0}), 0.1);
  EXPECT_EQ(t.at<double>({6}), 0.7);
  for (int64_t i = 0; i < 7; ++i) {
    EXPECT_NEAR(t.at<double>({i}), 0.1 + 0.1 * static_cast<double>(i), 1e-15);
  }
}

TEST(FactoriesTest, LinspaceDescendingAndNegative) {
  EXPECT_THAT(linspace(5, 2, 4).to_vector<float>(), ElementsAre(5.f, 4.f, 3.f, 2.f));
  Tensor t = linspace(-1, 1, 4);
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(-1.f, FloatEq(-1.f / 3), FloatEq(1.f / 3), 1.f));
}

TEST(FactoriesTest, LinspaceWithZeroStepsIsEmpty) {
  Tensor t = linspace(2, 5, 0);
  EXPECT_EQ(t.shape(), Shape({0}));
  EXPECT_EQ(t.dtype(), kFloat32);
}

TEST(FactoriesTest, LinspaceWithOneStepIsStart) {
  // PyTorch: torch.linspace(2, 5, 1) == tensor([2.]).
  EXPECT_THAT(linspace(2, 5, 1).to_vector<float>(), ElementsAre(2.f));
  EXPECT_THAT(linspace(-7, 5, 1, kInt64).to_vector<int64_t>(), ElementsAre(-7));
}

TEST(FactoriesTest, LinspaceWithTwoStepsIsBothEnds) {
  EXPECT_THAT(linspace(2, 5, 2).to_vector<float>(), ElementsAre(2.f, 5.f));
}

TEST(FactoriesTest, LinspaceInInt64Truncates) {
  // PyTorch: torch.linspace(0, 1, 3, dtype=torch.int64) == tensor([0, 0, 1]).
  EXPECT_THAT(linspace(0, 1, 3, kInt64).to_vector<int64_t>(), ElementsAre(0, 0, 1));
  EXPECT_THAT(linspace(0, 10, 6, kInt64).to_vector<int64_t>(), ElementsAre(0, 2, 4, 6, 8, 10));
}

TEST(FactoriesTest, LinspaceWithNegativeStepsIsAValueError) {
  EXPECT_TG_THROW(linspace(0, 1, -1), ValueError, "linspace", "steps", "-1");
}

TEST(FactoriesTest, LinspaceWithMoreStepsThanBytesCanCountThrows) {
  EXPECT_TG_THROW(linspace(0, 1, int64_t{1} << 62), ShapeError, "(4611686018427387904)");
  EXPECT_THROW(linspace(0, 1, int64_t{1} << 60), Error);  // 2^62 bytes: cannot be allocated
}

TEST(FactoriesTest, LinspaceWithNonFiniteEndsIsAValueError) {
  EXPECT_TG_THROW(linspace(0, kInf, 3), ValueError, "linspace", "finite", "inf");
  EXPECT_TG_THROW(linspace(kNaN, 1, 3), ValueError, "linspace", "finite", "nan");
}

// ---- eye

TEST(FactoriesTest, EyeSquare) {
  Tensor t = eye(3);
  expect_fresh(t, {3, 3}, kFloat32);
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 1.f));
}

TEST(FactoriesTest, EyeWideAndTall) {
  EXPECT_THAT(eye(2, 3).to_vector<float>(), ElementsAre(1.f, 0.f, 0.f, 0.f, 1.f, 0.f));
  Tensor tall = eye(3, 2, kInt64);
  expect_fresh(tall, {3, 2}, kInt64);
  EXPECT_THAT(tall.to_vector<int64_t>(), ElementsAre(1, 0, 0, 1, 0, 0));
}

TEST(FactoriesTest, EyeInEveryDType) {
  for (DType dt : kAllDTypes) {
    Tensor t = eye(2, -1, dt);
    expect_fresh(t, {2, 2}, dt);
    EXPECT_THAT(as_doubles(t), ElementsAre(1.0, 0.0, 0.0, 1.0)) << dtype_name(dt);
  }
}

TEST(FactoriesTest, EyeWithZeroSizes) {
  EXPECT_EQ(eye(0).shape(), Shape({0, 0}));
  EXPECT_EQ(eye(0, 3).shape(), Shape({0, 3}));
  EXPECT_EQ(eye(3, 0).shape(), Shape({3, 0}));
}

TEST(FactoriesTest, EyeWithNegativeNIsAValueError) {
  EXPECT_TG_THROW(eye(-2), ValueError, "eye", "-2");
  EXPECT_TG_THROW(eye(-2, 3), ValueError, "eye", "-2");
}

// ---- tensor(values, shape)

TEST(FactoriesTest, TensorFromFloatInitializerList) {
  Tensor t = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  expect_fresh(t, {2, 3}, kFloat32);
  EXPECT_EQ(t.at<float>({1, 0}), 4.f);
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(1.f, 2.f, 3.f, 4.f, 5.f, 6.f));
}

TEST(FactoriesTest, TensorFromOneDimFloatList) {
  Tensor t = tensor({1.5f, -2.f});
  expect_fresh(t, {2}, kFloat32);
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(1.5f, -2.f));
}

TEST(FactoriesTest, TensorFromDoubleList) {
  Tensor t = tensor({0.1, 0.2}, {2, 1});
  expect_fresh(t, {2, 1}, kFloat64);
  EXPECT_THAT(t.to_vector<double>(), ElementsAre(0.1, 0.2));
}

TEST(FactoriesTest, TensorFromIntListIsInt64) {
  Tensor t = tensor({3, -1, 4, 1}, {2, 2});
  expect_fresh(t, {2, 2}, kInt64);
  EXPECT_THAT(t.to_vector<int64_t>(), ElementsAre(3, -1, 4, 1));
}

TEST(FactoriesTest, TensorFromBoolList) {
  Tensor t = tensor({true, false, false, true}, {4});
  expect_fresh(t, {4}, kBool);
  EXPECT_THAT(t.to_vector<bool>(), ElementsAre(true, false, false, true));
}

TEST(FactoriesTest, TensorFromVectors) {
  Tensor f = tensor(std::vector<float>{1.f, 2.f}, {1, 2});
  expect_fresh(f, {1, 2}, kFloat32);
  EXPECT_THAT(tensor(std::vector<double>{0.5, 1.5, 2.5}).to_vector<double>(),
              ElementsAre(0.5, 1.5, 2.5));
  Tensor i = tensor(std::vector<int64_t>{int64_t{1} << 62, -5});
  expect_fresh(i, {2}, kInt64);
  EXPECT_THAT(i.to_vector<int64_t>(), ElementsAre(int64_t{1} << 62, -5));
  Tensor b = tensor(std::vector<bool>{false, true, true}, {3, 1});
  expect_fresh(b, {3, 1}, kBool);
  EXPECT_THAT(b.to_vector<bool>(), ElementsAre(false, true, true));
  Tensor h = tensor(std::vector<Half>{Half(1.5f), Half(-2.f)});
  expect_fresh(h, {2}, kFloat16);
  EXPECT_THAT(as_doubles(h), ElementsAre(1.5, -2.0));
  Tensor bf = tensor(std::vector<BFloat16>{BFloat16(0.5f)}, {});
  expect_fresh(bf, {}, kBFloat16);
  EXPECT_EQ(static_cast<float>(bf.item<BFloat16>()), 0.5f);
}

TEST(FactoriesTest, TensorFromEmptyValues) {
  Tensor t = tensor(std::vector<float>{});
  expect_fresh(t, {0}, kFloat32);
  expect_fresh(tensor(std::vector<int64_t>{}, {2, 0}), {2, 0}, kInt64);
}

TEST(FactoriesTest, TensorCopiesTheValues) {
  std::vector<float> values{1.f, 2.f};
  Tensor t = tensor(values);
  values[0] = 100.f;
  EXPECT_EQ(t.at<float>({0}), 1.f);
}

TEST(FactoriesTest, TensorValueCountMismatchNamesCountAndShape) {
  EXPECT_TG_THROW(tensor({1.f, 2.f, 3.f}, {2, 2}), ShapeError, "tensor", "3 values", "(2, 2)",
                  "4 elements");
  EXPECT_TG_THROW(tensor({1, 2, 3, 4, 5}, {2, 2}), ShapeError, "tensor", "5 values", "(2, 2)");
  EXPECT_TG_THROW(tensor({true}, {0}), ShapeError, "tensor", "1 values", "(0)", "0 elements");
  EXPECT_TG_THROW(tensor(std::vector<double>{}, {}), ShapeError, "tensor", "0 values", "()",
                  "1 elements");
}

TEST(FactoriesTest, TensorWithOverflowingShapeIsAShapeError) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_TG_THROW(tensor({1.f}, {big, big}), ShapeError, "tensor",
                  "(1099511627776, 1099511627776)");
}

// ---- scalar_tensor

TEST(FactoriesTest, ScalarTensorIsZeroDim) {
  Tensor t = scalar_tensor(2.5);
  expect_fresh(t, {}, kFloat32);
  EXPECT_EQ(t.dim(), 0u);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(t.item<float>(), 2.5f);
}

TEST(FactoriesTest, ScalarTensorInEveryDType) {
  EXPECT_EQ(scalar_tensor(0.1, kFloat64).item<double>(), 0.1);
  EXPECT_EQ(scalar_tensor(-7.9, kInt64).item<int64_t>(), -7);
  EXPECT_TRUE(scalar_tensor(2.0, kBool).item<bool>());
  EXPECT_FALSE(scalar_tensor(0.0, kBool).item<bool>());
  EXPECT_EQ(static_cast<float>(scalar_tensor(65504.0, kFloat16).item<Half>()), 65504.f);
  EXPECT_EQ(static_cast<float>(scalar_tensor(1.0, kBFloat16).item<BFloat16>()), 1.f);
}

}  // namespace
}  // namespace tg
