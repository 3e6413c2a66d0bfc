// tests/core/tensor_test.cpp — the Tensor handle: sharing, metadata, typed access, grad state.
#include <cstdint>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A 2x3 float32 matrix holding 0, 1, ..., 5.
Tensor matrix23() { return tensor({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}, {2, 3}); }

// ---- a cheap handle

TEST(TensorTest, DefaultConstructedIsUndefined) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.impl(), nullptr);
}

TEST(TensorTest, CopyingAHandleSharesTheSameImpl) {
  Tensor a = zeros({2, 2});
  Tensor b = a;  // NOLINT(performance-unnecessary-copy-initialization): the point of the test
  EXPECT_EQ(a.impl(), b.impl());
  EXPECT_TRUE(b.defined());
}

TEST(TensorTest, WritingThroughACopySeenThroughTheOriginal) {
  Tensor a = zeros({2, 2});
  Tensor b = a;
  b.fill_(3.0);
  EXPECT_THAT(a.to_vector<float>(), ElementsAre(3.f, 3.f, 3.f, 3.f));
}

TEST(TensorTest, CopiedHandleSharesGradState) {
  Tensor a = zeros({2});
  Tensor b = a;
  b.requires_grad_();
  EXPECT_TRUE(a.requires_grad());
  b.set_grad(ones({2}));
  ASSERT_TRUE(a.grad().defined());
  EXPECT_EQ(a.grad().impl(), b.grad().impl());
  EXPECT_THAT(a.grad().to_vector<float>(), ElementsAre(1.f, 1.f));
}

TEST(TensorTest, AssigningAHandleRebindsIt) {
  Tensor a = zeros({2});
  Tensor b = ones({3});
  b = a;
  EXPECT_EQ(b.impl(), a.impl());
  EXPECT_EQ(b.numel(), 2);
}

TEST(TensorTest, MovedFromHandleIsUndefined) {
  Tensor a = zeros({2});
  TensorImpl* impl = a.impl();
  Tensor b = std::move(a);
  EXPECT_EQ(b.impl(), impl);
  EXPECT_FALSE(a.defined());  // NOLINT(bugprone-use-after-move): shared_ptr's moved-from state
}

TEST(TensorTest, DataOutlivesTheHandleThatCreatedIt) {
  Tensor view;
  {
    Tensor base = matrix23();
    view = base.select(0, 1);
  }
  EXPECT_THAT(view.to_vector<float>(), ElementsAre(3.f, 4.f, 5.f));
}

// ---- metadata

TEST(TensorTest, MetadataOfAContiguousMatrix) {
  Tensor t = zeros({2, 3, 4});
  EXPECT_EQ(t.dim(), 3u);
  EXPECT_EQ(t.shape(), Shape({2, 3, 4}));
  EXPECT_EQ(t.strides(), Strides({12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.requires_grad());
}

TEST(TensorTest, SizeAndStrideAcceptNegativeDims) {
  Tensor t = zeros({2, 3, 4});
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(2), 4);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.size(-3), 2);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.stride(-1), 1);
  EXPECT_EQ(t.stride(-2), 4);
}

TEST(TensorTest, SizeOutOfRangeThrowsIndexError) {
  Tensor t = zeros({2, 3});
  EXPECT_TG_THROW(t.size(2), IndexError, "size", "dim 2", "rank 2");
  EXPECT_TG_THROW(t.size(-3), IndexError, "size", "dim -3", "rank 2");
  EXPECT_TG_THROW(t.stride(5), IndexError, "stride", "dim 5", "rank 2");
}

TEST(TensorTest, ZeroDimTensorMetadata) {
  Tensor t = scalar_tensor(2.0);
  EXPECT_EQ(t.dim(), 0u);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_TRUE(t.shape().empty());
  EXPECT_TRUE(t.is_contiguous());
}

TEST(TensorTest, SizeAndStrideOfAZeroDimTensorThrow) {
  // A 0-d tensor has no dims to ask about (PyTorch: "Dimension specified as 0 but tensor has
  // no dimensions"). A 0-d view made by select() must not leak its base's sizes.
  Tensor s = arange(5)[2];
  ASSERT_EQ(s.dim(), 0u);
  EXPECT_TG_THROW(s.size(0), IndexError, "size", "dim 0", "0-d");
  EXPECT_TG_THROW(s.size(-1), IndexError, "size", "dim -1", "0-d");
  EXPECT_TG_THROW(s.stride(0), IndexError, "stride", "dim 0", "0-d");
  EXPECT_TG_THROW(scalar_tensor(1.0).size(1), IndexError, "size", "dim 1");
}

TEST(TensorTest, EmptyTensorHasZeroElements) {
  Tensor t = zeros({3, 0, 2});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.dim(), 3u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.to_vector<float>().empty());
}

TEST(TensorTest, ElementSizePerDType) {
  EXPECT_EQ(zeros({1}, kFloat32).element_size(), 4u);
  EXPECT_EQ(zeros({1}, kFloat64).element_size(), 8u);
  EXPECT_EQ(zeros({1}, kFloat16).element_size(), 2u);
  EXPECT_EQ(zeros({1}, kBFloat16).element_size(), 2u);
  EXPECT_EQ(zeros({1}, kInt64).element_size(), 8u);
  EXPECT_EQ(zeros({1}, kBool).element_size(), 1u);
}

TEST(TensorTest, StorageIsCacheLineAligned) {
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool}) {
    for (int64_t n : {0, 1, 3, 17, 1000}) {
      Tensor t = empty({n}, dt);
      const auto address = reinterpret_cast<uintptr_t>(t.storage()->data());
      EXPECT_EQ(address % 64, 0u) << "dtype " << dtype_name(dt) << ", n " << n;
      EXPECT_EQ(address % Storage::kAlignment, 0u);
      EXPECT_GE(t.storage()->nbytes(), static_cast<size_t>(n) * t.element_size());
    }
  }
}

TEST(TensorTest, RawDataOfAViewIsOffsetIntoStorage) {
  Tensor t = zeros({4, 5}, kFloat64);
  Tensor row = t.select(0, 2);
  EXPECT_EQ(row.storage(), t.storage());
  EXPECT_EQ(row.storage_offset(), 10);
  EXPECT_EQ(static_cast<std::byte*>(row.raw_data()), t.storage()->data() + 10 * 8);
  EXPECT_EQ(row.data<double>(), t.data<double>() + 10);
}

TEST(TensorTest, TransposedViewIsNotContiguous) {
  Tensor t = matrix23().t();
  EXPECT_EQ(t.shape(), Shape({3, 2}));
  EXPECT_EQ(t.strides(), Strides({1, 3}));
  EXPECT_FALSE(t.is_contiguous());
}

TEST(TensorTest, SizeOneDimsDoNotBreakContiguity) {
  // The stride of a size-1 dim is never used, so any value keeps the tensor contiguous.
  Tensor t = zeros({3, 1, 4}).transpose(0, 1);  // shape (1, 3, 4), strides (4, 4, 1)
  EXPECT_TRUE(t.is_contiguous());
}

// ---- typed access

TEST(TensorTest, DataPointsAtTheElementsInRowMajorOrder) {
  Tensor t = matrix23();
  const float* p = t.data<float>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p[i], static_cast<float>(i));
  t.data<float>()[4] = 40.f;
  EXPECT_EQ(t.at<float>({1, 1}), 40.f);
}

TEST(TensorTest, DataWithWrongTypeThrowsDTypeError) {
  Tensor t = zeros({2}, kFloat32);
  EXPECT_TG_THROW(t.data<double>(), DTypeError, "data", "float32", "float64");
  EXPECT_TG_THROW(t.data<int64_t>(), DTypeError, "data", "float32", "int64");
  Tensor b = zeros({2}, kBool);
  EXPECT_TG_THROW(b.data<float>(), DTypeError, "data", "bool", "float32");
}

TEST(TensorTest, ItemOfOneElementTensors) {
  EXPECT_EQ(scalar_tensor(2.5).item<float>(), 2.5f);
  EXPECT_EQ(tensor({7.f}, {1, 1, 1}).item<float>(), 7.f);
  EXPECT_EQ(scalar_tensor(-3.0, kInt64).item<int64_t>(), -3);
  EXPECT_EQ(scalar_tensor(0.25, kFloat64).item<double>(), 0.25);
  EXPECT_TRUE(scalar_tensor(1.0, kBool).item<bool>());
  EXPECT_EQ(static_cast<float>(scalar_tensor(1.5, kFloat16).item<Half>()), 1.5f);
  EXPECT_EQ(static_cast<float>(scalar_tensor(-2.0, kBFloat16).item<BFloat16>()), -2.f);
}

TEST(TensorTest, ItemOfAViewReadsTheViewedElement) {
  Tensor t = matrix23();
  EXPECT_EQ(t[1][2].item<float>(), 5.f);
  EXPECT_EQ(t.t()[2][0].item<float>(), 2.f);
}

TEST(TensorTest, ItemWithWrongDTypeNamesBothDTypes) {
  EXPECT_TG_THROW(scalar_tensor(1.0).item<int64_t>(), DTypeError, "item", "float32", "int64");
  EXPECT_TG_THROW(scalar_tensor(1.0, kInt64).item<double>(), DTypeError, "item", "int64",
                  "float64");
}

TEST(TensorTest, ItemOfSeveralElementsNamesTheShape) {
  EXPECT_TG_THROW(zeros({2, 3}).item<float>(), ShapeError, "item", "(2, 3)", "6 elements");
  EXPECT_TG_THROW(zeros({0}).item<float>(), ShapeError, "item", "(0)", "0 elements");
}

TEST(TensorTest, AtReadsElementsByIndex) {
  Tensor t = matrix23();
  EXPECT_EQ(t.at<float>({0, 0}), 0.f);
  EXPECT_EQ(t.at<float>({0, 2}), 2.f);
  EXPECT_EQ(t.at<float>({1, 0}), 3.f);
  EXPECT_EQ(t.at<float>({1, 2}), 5.f);
}

TEST(TensorTest, AtAcceptsNegativeIndices) {
  Tensor t = matrix23();
  EXPECT_EQ(t.at<float>({-1, -1}), 5.f);
  EXPECT_EQ(t.at<float>({-2, -3}), 0.f);
  EXPECT_EQ(t.at<float>({1, -2}), 4.f);
}

TEST(TensorTest, AtFollowsTheStridesOfAView) {
  Tensor tt = matrix23().t();  // (3, 2): tt[i][j] = i + 3 j
  EXPECT_EQ(tt.at<float>({0, 1}), 3.f);
  EXPECT_EQ(tt.at<float>({2, 0}), 2.f);
  EXPECT_EQ(tt.at<float>({-1, -1}), 5.f);
  Tensor col = matrix23().select(1, 1);  // (1, 4)
  EXPECT_EQ(col.at<float>({1}), 4.f);
}

TEST(TensorTest, AtOfAZeroDimTensorTakesAnEmptyIndex) {
  EXPECT_EQ(scalar_tensor(9.0, kInt64).at<int64_t>({}), 9);
}

TEST(TensorTest, AtOutOfRangeNamesIndexDimAndSize) {
  Tensor t = matrix23();
  EXPECT_TG_THROW(t.at<float>({2, 0}), IndexError, "at", "index 2", "dim 0", "size 2");
  EXPECT_TG_THROW(t.at<float>({0, 3}), IndexError, "at", "index 3", "dim 1", "size 3");
  EXPECT_TG_THROW(t.at<float>({0, -4}), IndexError, "at", "index -4", "dim 1", "size 3");
  EXPECT_TG_THROW(t.at<float>({-3, 0}), IndexError, "at", "index -3", "dim 0", "size 2");
}

TEST(TensorTest, AtWithWrongIndexCountNamesIndexAndShape) {
  Tensor t = matrix23();
  EXPECT_TG_THROW(t.at<float>({1}), IndexError, "at", "(1)", "1 entries", "(2, 3)", "2 dims");
  EXPECT_TG_THROW(t.at<float>({0, 0, 0}), IndexError, "at", "(0, 0, 0)", "3 entries", "(2, 3)");
  EXPECT_TG_THROW(scalar_tensor(1.0).at<float>({0}), IndexError, "at", "0 dims");
}

TEST(TensorTest, AtWithWrongDTypeThrowsDTypeError) {
  EXPECT_TG_THROW(matrix23().at<double>({0, 0}), DTypeError, "at", "float32", "float64");
}

TEST(TensorTest, ToVectorOfAContiguousTensor) {
  EXPECT_THAT(matrix23().to_vector<float>(), ElementsAre(0.f, 1.f, 2.f, 3.f, 4.f, 5.f));
  EXPECT_THAT(tensor({4, -5, 6}, {3}).to_vector<int64_t>(), ElementsAre(4, -5, 6));
}

TEST(TensorTest, ToVectorOfATransposedViewIsInTheViewsRowMajorOrder) {
  Tensor t = matrix23();
  EXPECT_THAT(t.t().to_vector<float>(), ElementsAre(0.f, 3.f, 1.f, 4.f, 2.f, 5.f));
  // The base is unchanged and still shares nothing new.
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(0.f, 1.f, 2.f, 3.f, 4.f, 5.f));
}

TEST(TensorTest, ToVectorOfSlicedAndExpandedViews) {
  Tensor t = arange(0, 12).view({3, 4});
  EXPECT_THAT(t.slice(1, 1, 4, 2).to_vector<float>(), ElementsAre(1.f, 3.f, 5.f, 7.f, 9.f, 11.f));
  EXPECT_THAT(t.select(1, 2).to_vector<float>(), ElementsAre(2.f, 6.f, 10.f));
  EXPECT_THAT(t.narrow(0, 1, 1).to_vector<float>(), ElementsAre(4.f, 5.f, 6.f, 7.f));
  Tensor col = tensor({1.f, 2.f}, {2, 1}).expand({2, 3});
  EXPECT_THAT(col.to_vector<float>(), ElementsAre(1.f, 1.f, 1.f, 2.f, 2.f, 2.f));
}

TEST(TensorTest, ToVectorOfBoolTensor) {
  EXPECT_THAT(tensor({true, false, true}, {3}).to_vector<bool>(), ElementsAre(true, false, true));
}

TEST(TensorTest, ToVectorWithWrongDTypeThrowsDTypeError) {
  EXPECT_TG_THROW(matrix23().to_vector<int64_t>(), DTypeError, "to_vector", "float32", "int64");
}

// ---- gradient state

TEST(TensorTest, RequiresGradDefaultsToFalseAndCanBeToggled) {
  Tensor t = zeros({2});
  EXPECT_FALSE(t.requires_grad());
  Tensor& same = t.requires_grad_();
  EXPECT_EQ(&same, &t);
  EXPECT_TRUE(t.requires_grad());
  t.requires_grad_(false);
  EXPECT_FALSE(t.requires_grad());
}

TEST(TensorTest, EveryFloatingDTypeCanRequireGrad) {
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor t = zeros({2}, dt);
    t.requires_grad_();
    EXPECT_TRUE(t.requires_grad()) << dtype_name(dt);
  }
}

TEST(TensorTest, NonFloatingDTypesCannotRequireGrad) {
  EXPECT_TG_THROW(zeros({2}, kInt64).requires_grad_(), DTypeError, "requires_grad_", "int64");
  EXPECT_TG_THROW(zeros({2}, kBool).requires_grad_(), DTypeError, "requires_grad_", "bool");
  Tensor t = zeros({2}, kInt64);
  t.requires_grad_(false);  // turning it off is always fine
  EXPECT_FALSE(t.requires_grad());
}

TEST(TensorTest, ViewsDoNotInheritRequiresGradOnTheirOwn) {
  // requires_grad is per TensorImpl; a view is a new impl, which requires grad only when
  // the view is recorded on the tape (tests/core/view_grad_test.cpp), not under NoGradGuard.
  Tensor t = zeros({2, 2});
  t.requires_grad_();
  NoGradGuard no_grad;
  EXPECT_FALSE(t.t().requires_grad());
}

TEST(TensorTest, GradIsUndefinedUntilSet) {
  Tensor t = zeros({2, 3});
  EXPECT_FALSE(t.grad().defined());
}

TEST(TensorTest, SetGradStoresTheSameTensor) {
  Tensor t = zeros({2, 3});
  Tensor g = ones({2, 3});
  t.set_grad(g);
  EXPECT_EQ(t.grad().impl(), g.impl());
  g.fill_(2.0);  // the grad is the same tensor, not a copy
  EXPECT_EQ(t.grad().at<float>({1, 2}), 2.f);
}

TEST(TensorTest, SetGradWithUndefinedClearsIt) {
  Tensor t = zeros({2});
  t.set_grad(ones({2}));
  t.set_grad(Tensor());
  EXPECT_FALSE(t.grad().defined());
}

TEST(TensorTest, SetGradShapeMismatchNamesBothShapes) {
  Tensor t = zeros({2, 3});
  EXPECT_TG_THROW(t.set_grad(ones({3, 2})), ShapeError, "set_grad", "(3, 2)", "(2, 3)");
  EXPECT_TG_THROW(t.set_grad(ones({6})), ShapeError, "set_grad", "(6)", "(2, 3)");
  EXPECT_FALSE(t.grad().defined());  // a rejected grad is not stored
}

TEST(TensorTest, SetGradDTypeMismatchNamesBothDTypes) {
  Tensor t = zeros({2, 3});
  EXPECT_TG_THROW(t.set_grad(ones({2, 3}, kFloat64)), DTypeError, "set_grad", "float64", "float32");
}

// ---- undefined tensors

TEST(TensorTest, EveryAccessorOfAnUndefinedTensorThrowsMisuseError) {
  const Tensor u;
  Tensor m;
  EXPECT_TG_THROW(u.shape(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.strides(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.storage_offset(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.dtype(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.storage(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.dim(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.size(0), MisuseError, "undefined");
  EXPECT_TG_THROW(u.stride(0), MisuseError, "undefined");
  EXPECT_TG_THROW(u.numel(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.element_size(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.is_contiguous(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.data<float>(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.raw_data(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.requires_grad(), MisuseError, "undefined");
  EXPECT_TG_THROW(m.requires_grad_(), MisuseError, "undefined");
  EXPECT_TG_THROW(m.requires_grad_(false), MisuseError, "undefined");
  EXPECT_TG_THROW(u.grad(), MisuseError, "undefined");
  EXPECT_TG_THROW(m.set_grad(ones({1})), MisuseError, "undefined");
  EXPECT_TG_THROW(m.set_grad(Tensor()), MisuseError, "undefined");
  EXPECT_TG_THROW(u.item<float>(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.at<float>({}), MisuseError, "undefined");
  EXPECT_TG_THROW(u.to_vector<float>(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.to(kFloat64), MisuseError, "undefined");
  EXPECT_TG_THROW(u.clone(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.contiguous(), MisuseError, "undefined");
  EXPECT_TG_THROW(m.fill_(1.0), MisuseError, "undefined");
  EXPECT_TG_THROW(m.copy_(ones({1})), MisuseError, "undefined");
  EXPECT_TG_THROW(u.view({1}), MisuseError, "undefined");
  EXPECT_TG_THROW(u.t(), MisuseError, "undefined");
  EXPECT_TG_THROW(u.expand({1}), MisuseError, "undefined");
  EXPECT_TG_THROW(u[0], MisuseError, "undefined");
}

TEST(TensorTest, UsingAnUndefinedTensorAsASourceThrowsMisuseError) {
  Tensor t = zeros({2});
  EXPECT_TG_THROW(t.copy_(Tensor()), MisuseError, "undefined");
  EXPECT_TG_THROW(zeros_like(Tensor()), MisuseError, "undefined");
}

TEST(TensorTest, UndefinedMisuseErrorHintsAtTheFix) {
  EXPECT_TG_THROW(Tensor().numel(), MisuseError, "default-constructed", "tg::zeros");
}

TEST(TensorTest, ToStringOfUndefinedDoesNotThrow) {
  Tensor u;
  std::string s;
  EXPECT_NO_THROW(s = u.to_string());
  EXPECT_THAT(s, HasSubstr("undefined"));
  EXPECT_EQ(fmt::format("{}", u), s);
}

}  // namespace
}  // namespace tg
