// tests/core/view_test.cpp — views with PyTorch semantics: view, reshape, permute,
// transpose, t, squeeze, unsqueeze, expand, narrow, slice, select, flatten, unflatten and
// contiguous.
//
// Most tests view tg::arange(n): its value at each position is that element's index in
// the storage, so to_vector() shows exactly which storage elements a view addresses, in
// which order, and writes through a view can be traced back to the base.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

using Floats = std::vector<float>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// 0, 1, ..., numel-1 as a contiguous float32 tensor of `shape`.
Tensor iota(const Shape& shape) {
  return arange(static_cast<double>(checked_numel(shape, "iota"))).view(shape);
}

// The floats first, first + 1, ..., last - 1.
Floats range(int first, int last) {
  Floats v;
  for (int i = first; i < last; ++i) v.push_back(static_cast<float>(i));
  return v;
}

// ---- view

TEST(ViewTest, ViewSharesStorageWithContiguousStrides) {
  const Tensor x = arange(24);
  const Tensor v = x.view({2, 3, 4});
  EXPECT_EQ(v.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(v.strides(), (Strides{12, 4, 1}));
  EXPECT_EQ(v.storage_offset(), 0);
  EXPECT_EQ(v.storage(), x.storage());
  EXPECT_NE(v.impl(), x.impl());  // a new tensor, not the same handle
  EXPECT_EQ(v.to_vector<float>(), range(0, 24));
  EXPECT_EQ(v.at<float>({1, 2, 3}), 23.f);
  EXPECT_EQ(v.at<float>({1, 0, 2}), 14.f);
}

TEST(ViewTest, ViewInfersTheMinusOneSize) {
  const Tensor x = arange(24);
  EXPECT_EQ(x.view({-1, 6}).shape(), (Shape{4, 6}));
  EXPECT_EQ(x.view({2, -1}).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.view({2, 3, -1}).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(x.view({2, -1, 4}).strides(), (Strides{12, 4, 1}));
  EXPECT_EQ(x.view({2, 3, 4}).view({-1}).shape(), (Shape{24}));
  EXPECT_EQ(x.view({1, -1, 1}).shape(), (Shape{1, 24, 1}));
}

TEST(ViewTest, ViewAddsAndRemovesSizeOneDims) {
  const Tensor x = iota({2, 3});
  const Tensor v = x.view({1, 2, 1, 3, 1});
  EXPECT_EQ(v.shape(), (Shape{1, 2, 1, 3, 1}));
  EXPECT_EQ(v.stride(1), 3);
  EXPECT_EQ(v.stride(3), 1);
  EXPECT_EQ(v.to_vector<float>(), range(0, 6));
  EXPECT_EQ(v.view({3, 2}).to_vector<float>(), range(0, 6));
}

TEST(ViewTest, ViewKeepsTheStorageOffset) {
  // Rows 1 and 2 of a (4, 3) matrix are contiguous memory starting at element 3.
  const Tensor rows = iota({4, 3}).narrow(0, 1, 2);
  ASSERT_EQ(rows.storage_offset(), 3);
  const Tensor v = rows.view({-1});
  EXPECT_EQ(v.shape(), (Shape{6}));
  EXPECT_EQ(v.storage_offset(), 3);
  EXPECT_EQ(v.to_vector<float>(), range(3, 9));
}

TEST(ViewTest, ViewSplitsADimOfANonContiguousTensor) {
  // The first 3 columns of a (4, 6) matrix: rows are 6 apart, so the dims cannot merge,
  // but dim 0 can still be split.
  const Tensor cols = iota({4, 6}).narrow(1, 0, 3);
  ASSERT_EQ(cols.strides(), (Strides{6, 1}));
  const Tensor v = cols.view({2, 2, 3});
  EXPECT_EQ(v.strides(), (Strides{12, 6, 1}));
  EXPECT_EQ(v.storage(), cols.storage());
  EXPECT_EQ(v.to_vector<float>(), (Floats{0, 1, 2, 6, 7, 8, 12, 13, 14, 18, 19, 20}));
  EXPECT_EQ(cols.view({4, 3, 1}).to_vector<float>(), cols.to_vector<float>());
}

TEST(ViewTest, ViewSplitsDimsOfAPermutedTensor) {
  // (2, 3, 4) permuted to (3, 2, 4) has strides (4, 12, 1); the last dim can be split.
  const Tensor p = iota({2, 3, 4}).permute({1, 0, 2});
  ASSERT_EQ(p.strides(), (Strides{4, 12, 1}));
  const Tensor v = p.view({3, 2, 2, 2});
  EXPECT_EQ(v.strides(), (Strides{4, 12, 2, 1}));
  EXPECT_EQ(v.to_vector<float>(), p.to_vector<float>());
  // A transposed matrix can gain size-1 dims anywhere.
  const Tensor t = iota({2, 3}).t();
  EXPECT_EQ(t.view({3, 1, 2}).to_vector<float>(), (Floats{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t.view({1, 3, 2}).strides()[1], 1);
  EXPECT_EQ(t.view({1, 3, 2}).strides()[2], 3);
}

TEST(ViewTest, ViewOfSizeOneDimWithAnyStride) {
  // (1, 3).t() is (3, 1) with strides (1, 3): contiguous, since a size-1 dim is never
  // stepped along, so it views as (3) with stride 1.
  const Tensor t = iota({1, 3}).t();
  ASSERT_EQ(t.strides(), (Strides{1, 3}));
  const Tensor v = t.view({3});
  EXPECT_EQ(v.strides(), (Strides{1}));
  EXPECT_EQ(v.to_vector<float>(), (Floats{0, 1, 2}));
}

TEST(ViewTest, ViewFailsOnATransposedTensor) {
  const Tensor t = iota({2, 3}).t();
  EXPECT_TG_THROW(t.view({6}), ShapeError, "view:", "(6)", "(3, 2)", "(1, 3)", "reshape");
  EXPECT_TG_THROW(t.view({-1}), ShapeError, "view:", "(6)", "(3, 2)");
  EXPECT_TG_THROW(t.view({2, 3}), ShapeError, "view:", "(2, 3)", "(3, 2)");
}

TEST(ViewTest, ViewFailsWhenANewDimStraddlesAGap) {
  const Tensor cols = iota({4, 6}).narrow(1, 0, 3);  // strides (6, 1)
  EXPECT_TG_THROW(cols.view({12}), ShapeError, "view:", "(12)", "(4, 3)", "(6, 1)");
  EXPECT_TG_THROW(cols.view({2, 6}), ShapeError, "view:", "(2, 6)", "(4, 3)");
  const Tensor p = iota({2, 3, 4}).permute({1, 0, 2});  // strides (4, 12, 1)
  EXPECT_TG_THROW(p.view({3, 8}), ShapeError, "view:", "(3, 8)", "(3, 2, 4)", "(4, 12, 1)");
  EXPECT_TG_THROW(p.view({6, 4}), ShapeError, "view:", "(6, 4)", "(3, 2, 4)");
  const Tensor e = arange(3).expand({4, 3});  // strides (0, 1)
  EXPECT_TG_THROW(e.view({12}), ShapeError, "view:", "(12)", "(4, 3)", "(0, 1)");
  const Tensor stepped = arange(10).slice(0, 0, 10, 2);  // stride 2 is fine for a split...
  EXPECT_EQ(stepped.view({5, 1}).to_vector<float>(), (Floats{0, 2, 4, 6, 8}));
}

TEST(ViewTest, ViewOfAnExpandedTensorCanSplitTheStretchedDim) {
  const Tensor e = tensor({1.f, 2.f, 3.f}).expand({4, 3});
  const Tensor v = e.view({2, 2, 3});
  EXPECT_EQ(v.strides(), (Strides{0, 0, 1}));
  EXPECT_EQ(v.to_vector<float>(), (Floats{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
}

TEST(ViewTest, ViewRejectsSizesThatDoNotMultiplyToNumel) {
  const Tensor x = iota({2, 3});
  EXPECT_TG_THROW(x.view({5}), ShapeError, "view:", "(5)", "6 elements");
  EXPECT_TG_THROW(x.view({4, 2}), ShapeError, "view:", "(4, 2)", "8 elements", "6 elements");
  EXPECT_TG_THROW(x.view({-1, 4}), ShapeError, "view:", "(-1, 4)", "6 elements");
  EXPECT_TG_THROW(x.view({}), ShapeError, "view:", "()", "6 elements");
}

TEST(ViewTest, ViewRejectsTwoMinusOnes) {
  EXPECT_TG_THROW(iota({2, 3}).view({-1, -1}), ShapeError, "view:", "only one", "(-1, -1)");
  EXPECT_TG_THROW(iota({2, 3}).reshape({-1, 3, -1}), ShapeError, "reshape:", "(-1, 3, -1)");
}

TEST(ViewTest, ViewRejectsNegativeSizes) {
  EXPECT_TG_THROW(iota({2, 3}).view({-2, -3}), ShapeError, "view:", "-2", "(-2, -3)");
  EXPECT_TG_THROW(iota({2, 3}).view({2, -3}), ShapeError, "view:", "-3", "dim 1", "(2, -3)");
  EXPECT_TG_THROW(iota({2, 3}).reshape({kMin}), ShapeError, "reshape:", "-9223372036854775808");
}

TEST(ViewTest, ViewRejectsShapesWhoseProductOverflows) {
  EXPECT_TG_THROW(iota({2, 3}).view({kMax, 2, 0}), ShapeError,
                  "view:", "(9223372036854775807, 2, 0)");
}

TEST(ViewTest, MinusOneCannotBeInferredWithZeroElements) {
  // Any size would fit in place of the -1: refused, as in PyTorch.
  EXPECT_TG_THROW(zeros({0, 3}).view({-1, 0}), ShapeError, "view:", "-1", "(-1, 0)", "0 elements");
  EXPECT_TG_THROW(zeros({2, 0, 4}).reshape({0, -1}), ShapeError, "reshape:", "(0, -1)");
}

// ---- reshape

TEST(ViewTest, ReshapeIsAViewWhenPossible) {
  Tensor x = iota({2, 6});
  Tensor r = x.reshape({3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 4}));
  EXPECT_EQ(r.strides(), (Strides{4, 1}));
  EXPECT_EQ(r.storage(), x.storage());
  r.select(0, 2).fill_(-1);  // writes through to x
  EXPECT_EQ(x.to_vector<float>(), (Floats{0, 1, 2, 3, 4, 5, 6, 7, -1, -1, -1, -1}));
}

TEST(ViewTest, ReshapeOfNonContiguousIsAViewWhenStridesAllow) {
  const Tensor cols = iota({4, 6}).narrow(1, 2, 3);  // offset 2, strides (6, 1)
  const Tensor r = cols.reshape({2, 2, 3});
  EXPECT_EQ(r.storage(), cols.storage());
  EXPECT_EQ(r.storage_offset(), 2);
  EXPECT_EQ(r.strides(), (Strides{12, 6, 1}));
  EXPECT_EQ(r.to_vector<float>(), (Floats{2, 3, 4, 8, 9, 10, 14, 15, 16, 20, 21, 22}));
}

TEST(ViewTest, ReshapeCopiesWhenStridesDoNotAllow) {
  Tensor x = iota({2, 3});
  Tensor r = x.t().reshape({6});
  EXPECT_NE(r.storage(), x.storage());
  EXPECT_EQ(r.shape(), (Shape{6}));
  EXPECT_EQ(r.strides(), (Strides{1}));
  EXPECT_EQ(r.storage_offset(), 0);
  EXPECT_EQ(r.to_vector<float>(), (Floats{0, 3, 1, 4, 2, 5}));
  r.fill_(9);  // a copy: the base does not change
  EXPECT_EQ(x.to_vector<float>(), range(0, 6));
}

TEST(ViewTest, ReshapeOfAnExpandedTensor) {
  const Tensor row = tensor({1.f, 2.f, 3.f});
  const Tensor e = row.expand({2, 3});
  const Tensor flat = e.reshape({-1});  // stride 0 cannot be merged: a copy
  EXPECT_NE(flat.storage(), row.storage());
  EXPECT_EQ(flat.to_vector<float>(), (Floats{1, 2, 3, 1, 2, 3}));
  const Tensor split = e.reshape({2, 1, 3});  // only adds a dim: a view
  EXPECT_EQ(split.storage(), row.storage());
  EXPECT_EQ(split.stride(0), 0);
}

TEST(ViewTest, ReshapeRejectsIncompatibleSizes) {
  EXPECT_TG_THROW(iota({2, 3}).reshape({4, 2}), ShapeError, "reshape:", "(4, 2)", "6 elements");
  EXPECT_TG_THROW(iota({2, 3}).t().reshape({4, -1}), ShapeError, "reshape:", "(4, -1)",
                  "6 elements");
  EXPECT_TG_THROW(iota({2, 3}).reshape({2, -5}), ShapeError, "reshape:", "-5", "(2, -5)");
}

// ---- permute, transpose, t

TEST(ViewTest, PermuteReordersSizesAndStrides) {
  const Tensor x = iota({2, 3, 4});
  const Tensor p = x.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Strides{1, 12, 4}));
  EXPECT_EQ(p.storage(), x.storage());
  EXPECT_FALSE(p.is_contiguous());
  // p[k][i][j] == x[i][j][k] == 12 i + 4 j + k
  Floats expected;
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) expected.push_back(static_cast<float>(12 * i + 4 * j + k));
    }
  }
  EXPECT_EQ(p.to_vector<float>(), expected);
}

TEST(ViewTest, PermuteAcceptsNegativeDims) {
  const Tensor x = iota({2, 3, 4});
  const Tensor p = x.permute({-1, 0, -2});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.to_vector<float>(), x.permute({2, 0, 1}).to_vector<float>());
  EXPECT_EQ(x.permute({0, 1, 2}).strides(), x.strides());
}

TEST(ViewTest, PermuteRejectsTheWrongNumberOfDims) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_TG_THROW(x.permute({0, 1}), ShapeError, "permute:", "(0, 1)", "rank 3", "(2, 3, 4)");
  EXPECT_TG_THROW(x.permute({0, 1, 2, 3}), ShapeError, "permute:", "(0, 1, 2, 3)", "(2, 3, 4)");
  EXPECT_TG_THROW(scalar_tensor(1).permute({0}), ShapeError, "permute:", "(0)", "rank 0");
}

TEST(ViewTest, PermuteRejectsDuplicateDims) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_TG_THROW(x.permute({0, 0, 1}), ShapeError, "permute:", "twice", "(0, 0, 1)");
  // -3 and 0 name the same dim.
  EXPECT_TG_THROW(x.permute({0, 1, -3}), ShapeError, "permute:", "twice", "(0, 1, -3)");
}

TEST(ViewTest, PermuteRejectsDimsOutOfRange) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_TG_THROW(x.permute({0, 1, 3}), IndexError, "permute:", "dim 3", "rank 3");
  EXPECT_TG_THROW(x.permute({-4, 1, 2}), IndexError, "permute:", "dim -4", "rank 3");
}

TEST(ViewTest, TransposeSwapsSizesAndStrides) {
  const Tensor x = iota({2, 3, 4});
  const Tensor t = x.transpose(0, 2);
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Strides{1, 4, 12}));
  EXPECT_EQ(t.storage(), x.storage());
  EXPECT_EQ(t.at<float>({3, 1, 0}), 7.f);   // x[0][1][3]
  EXPECT_EQ(t.at<float>({1, 2, 1}), 21.f);  // x[1][2][1]
  EXPECT_EQ(x.transpose(-1, 0).to_vector<float>(), t.to_vector<float>());
  EXPECT_EQ(x.transpose(1, 1).strides(), x.strides());
}

TEST(ViewTest, TransposeKeepsTheStorageOffset) {
  const Tensor rows = iota({4, 3}).narrow(0, 2, 2);  // offset 6
  const Tensor t = rows.transpose(0, 1);
  EXPECT_EQ(t.storage_offset(), 6);
  EXPECT_EQ(t.to_vector<float>(), (Floats{6, 9, 7, 10, 8, 11}));
}

TEST(ViewTest, TransposeRejectsDimsOutOfRange) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_TG_THROW(x.transpose(0, 3), IndexError, "transpose:", "dim 3", "rank 3");
  EXPECT_TG_THROW(x.transpose(-4, 0), IndexError, "transpose:", "dim -4", "rank 3");
}

TEST(ViewTest, TOfAMatrixIsItsTranspose) {
  const Tensor x = iota({2, 3});
  const Tensor t = x.t();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.strides(), (Strides{1, 3}));
  EXPECT_EQ(t.storage(), x.storage());
  EXPECT_EQ(t.to_vector<float>(), (Floats{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t.t().to_vector<float>(), range(0, 6));
}

TEST(ViewTest, TOfAVectorOrScalarChangesNothing) {
  const Tensor v = arange(4);
  EXPECT_EQ(v.t().shape(), (Shape{4}));
  EXPECT_EQ(v.t().to_vector<float>(), range(0, 4));
  const Tensor s = scalar_tensor(2.5);
  EXPECT_EQ(s.t().shape(), Shape{});
  EXPECT_EQ(s.t().item<float>(), 2.5f);
}

TEST(ViewTest, TRejectsMoreThanTwoDims) {
  EXPECT_TG_THROW(iota({2, 3, 4}).t(), ShapeError, "t:", "(2, 3, 4)");
}

// ---- squeeze and unsqueeze

TEST(ViewTest, SqueezeRemovesEverySizeOneDim) {
  const Tensor x = iota({1, 3, 1, 2});
  const Tensor s = x.squeeze();
  EXPECT_EQ(s.shape(), (Shape{3, 2}));
  EXPECT_EQ(s.strides(), (Strides{2, 1}));
  EXPECT_EQ(s.storage(), x.storage());
  EXPECT_EQ(s.to_vector<float>(), range(0, 6));
  EXPECT_EQ(iota({3, 2}).squeeze().shape(), (Shape{3, 2}));  // nothing to remove
}

TEST(ViewTest, SqueezeOfAllOnesIsZeroD) {
  const Tensor s = full({1, 1, 1}, 4.0).squeeze();
  EXPECT_EQ(s.dim(), 0u);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<float>(), 4.f);
}

TEST(ViewTest, SqueezeDimOnlyRemovesASizeOneDim) {
  const Tensor x = iota({1, 3, 1, 2});
  EXPECT_EQ(x.squeeze(0).shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(x.squeeze(2).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(x.squeeze(-2).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(x.squeeze(-2).strides(), (Strides{6, 2, 1}));
  // Size 3 or 2: a no-op, as in PyTorch.
  EXPECT_EQ(x.squeeze(1).shape(), (Shape{1, 3, 1, 2}));
  EXPECT_EQ(x.squeeze(1).strides(), x.strides());
  EXPECT_EQ(x.squeeze(-1).shape(), (Shape{1, 3, 1, 2}));
  EXPECT_EQ(x.squeeze(2).to_vector<float>(), range(0, 6));
}

TEST(ViewTest, SqueezeRejectsDimsOutOfRange) {
  EXPECT_TG_THROW(iota({1, 3, 1, 2}).squeeze(4), IndexError, "squeeze:", "dim 4", "rank 4");
  EXPECT_TG_THROW(iota({1, 3}).squeeze(-3), IndexError, "squeeze:", "dim -3", "rank 2");
  EXPECT_TG_THROW(scalar_tensor(1).squeeze(1), IndexError, "squeeze:", "dim 1", "rank 0");
}

TEST(ViewTest, UnsqueezeInsertsASizeOneDimAtEveryPosition) {
  const Tensor x = iota({2, 3});
  struct Case {
    int64_t dim;
    Shape shape;
    Strides strides;
  };
  const Case cases[] = {
      {0, {1, 2, 3}, {6, 3, 1}},  {1, {2, 1, 3}, {3, 3, 1}},  {2, {2, 3, 1}, {3, 1, 1}},
      {-1, {2, 3, 1}, {3, 1, 1}}, {-2, {2, 1, 3}, {3, 3, 1}}, {-3, {1, 2, 3}, {6, 3, 1}},
  };
  for (const Case& c : cases) {
    const Tensor u = x.unsqueeze(c.dim);
    EXPECT_EQ(u.shape(), c.shape) << "dim " << c.dim;
    EXPECT_EQ(u.strides(), c.strides) << "dim " << c.dim;
    EXPECT_EQ(u.storage(), x.storage());
    EXPECT_TRUE(u.is_contiguous());
    EXPECT_EQ(u.to_vector<float>(), range(0, 6));
  }
}

TEST(ViewTest, UnsqueezeOfATransposedTensor) {
  // PyTorch's stride for the new dim: size * stride of the dim that now follows it.
  const Tensor t = iota({2, 3}).t();  // (3, 2), strides (1, 3)
  EXPECT_EQ(t.unsqueeze(1).strides(), (Strides{1, 6, 3}));
  EXPECT_EQ(t.unsqueeze(0).strides(), (Strides{3, 1, 3}));
  EXPECT_EQ(t.unsqueeze(2).strides(), (Strides{1, 3, 1}));
  EXPECT_EQ(t.unsqueeze(1).to_vector<float>(), (Floats{0, 3, 1, 4, 2, 5}));
}

TEST(ViewTest, UnsqueezeRejectsDimsOutOfRange) {
  // Valid dims for a rank-2 tensor are -3 .. 2.
  EXPECT_TG_THROW(iota({2, 3}).unsqueeze(3), IndexError, "unsqueeze:", "dim 3", "rank 2",
                  "-3 to 2");
  EXPECT_TG_THROW(iota({2, 3}).unsqueeze(-4), IndexError, "unsqueeze:", "dim -4", "-3 to 2");
  // A 0-d tensor takes a new dim at 0 (or -1) only.
  EXPECT_TG_THROW(scalar_tensor(1).unsqueeze(1), IndexError, "unsqueeze:", "dim 1", "rank 0",
                  "-1 to 0");
}

// ---- expand

TEST(ViewTest, ExpandGivesStretchedDimsStrideZero) {
  const Tensor row = tensor({1.f, 2.f, 3.f}, {1, 3});
  const Tensor e = row.expand({2, 3});
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_EQ(e.strides(), (Strides{0, 1}));
  EXPECT_EQ(e.storage(), row.storage());
  EXPECT_EQ(e.to_vector<float>(), (Floats{1, 2, 3, 1, 2, 3}));
}

TEST(ViewTest, ExpandMinusOneKeepsASize) {
  const Tensor col = tensor({1.f, 2.f, 3.f}, {3, 1});
  const Tensor e = col.expand({-1, 4});
  EXPECT_EQ(e.shape(), (Shape{3, 4}));
  EXPECT_EQ(e.strides(), (Strides{1, 0}));
  EXPECT_EQ(e.to_vector<float>(), (Floats{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  EXPECT_EQ(col.expand({-1, -1}).shape(), (Shape{3, 1}));
}

TEST(ViewTest, ExpandAddsNewLeadingDims) {
  const Tensor v = tensor({1.f, 2.f});
  const Tensor e = v.expand({3, 1, 2});
  EXPECT_EQ(e.shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(e.strides(), (Strides{0, 0, 1}));
  EXPECT_EQ(e.to_vector<float>(), (Floats{1, 2, 1, 2, 1, 2}));
  const Tensor s = scalar_tensor(7).expand({2, 2});
  EXPECT_EQ(s.strides(), (Strides{0, 0}));
  EXPECT_EQ(s.to_vector<float>(), Floats(4, 7.f));
}

TEST(ViewTest, ExpandKeepsTheStridesOfDimsThatDoNotGrow) {
  const Tensor t = iota({2, 3}).t();  // (3, 2), strides (1, 3)
  const Tensor e = t.expand({4, 3, 2});
  EXPECT_EQ(e.strides(), (Strides{0, 1, 3}));
  EXPECT_EQ(e.select(0, 3).to_vector<float>(), (Floats{0, 3, 1, 4, 2, 5}));
}

TEST(ViewTest, ExpandToZeroSize) {
  EXPECT_EQ(tensor({1.f, 2.f}, {1, 2}).expand({0, 2}).shape(), (Shape{0, 2}));
  EXPECT_EQ(tensor({1.f, 2.f}).expand({0, 2}).numel(), 0);
  EXPECT_TRUE(tensor({1.f, 2.f}).expand({0, 2}).to_vector<float>().empty());
}

TEST(ViewTest, ExpandRejectsGrowingANonOneDim) {
  EXPECT_TG_THROW(iota({2, 3}).expand({4, 3}), ShapeError, "expand:", "(2, 3)", "(4, 3)", "dim 0",
                  "size 2");
  EXPECT_TG_THROW(iota({2, 3}).expand({2, 2, 6}), ShapeError, "expand:", "(2, 3)", "(2, 2, 6)",
                  "size 3");
  EXPECT_TG_THROW(iota({3}).expand({0}), ShapeError, "expand:", "(3)", "(0)");
}

TEST(ViewTest, ExpandRejectsFewerDimsAndBadSizes) {
  EXPECT_TG_THROW(iota({2, 3}).expand({3}), ShapeError, "expand:", "(3)", "(2, 3)");
  EXPECT_TG_THROW(iota({2, 3}).expand({-1, 2, 3}), ShapeError, "expand:", "-1", "(-1, 2, 3)");
  EXPECT_TG_THROW(iota({2, 1}).expand({2, -2}), ShapeError, "expand:", "-2", "(2, -2)");
  EXPECT_TG_THROW(iota({1}).expand({kMax, 2, 1}), ShapeError,
                  "expand:", "(9223372036854775807, 2, 1)");
}

TEST(ViewTest, ExpandedViewRefusesWrites) {
  Tensor base = tensor({1.f, 2.f, 3.f});
  Tensor e = base.expand({2, 3});
  EXPECT_TG_THROW(e.fill_(0), MisuseError, "fill_", "(2, 3)", "stride 0", "contiguous");
  EXPECT_TG_THROW(e.copy_(ones({2, 3})), MisuseError, "copy_", "(2, 3)", "stride 0");
  EXPECT_EQ(base.to_vector<float>(), (Floats{1, 2, 3}));  // nothing was written
  // A size-1 dim with stride 0 addresses each element once: writing is fine.
  base.expand({1, 3}).fill_(5);
  EXPECT_EQ(base.to_vector<float>(), (Floats{5, 5, 5}));
}

// ---- narrow

TEST(ViewTest, NarrowMovesTheOffset) {
  const Tensor x = arange(10);
  const Tensor n = x.narrow(0, 2, 3);
  EXPECT_EQ(n.shape(), (Shape{3}));
  EXPECT_EQ(n.strides(), (Strides{1}));
  EXPECT_EQ(n.storage_offset(), 2);
  EXPECT_EQ(n.storage(), x.storage());
  EXPECT_EQ(n.to_vector<float>(), (Floats{2, 3, 4}));
}

TEST(ViewTest, NarrowAcceptsANegativeStart) {
  const Tensor x = arange(10);
  EXPECT_EQ(x.narrow(0, -3, 2).to_vector<float>(), (Floats{7, 8}));
  EXPECT_EQ(x.narrow(0, -3, 2).storage_offset(), 7);
  EXPECT_EQ(x.narrow(-1, -10, 10).to_vector<float>(), range(0, 10));
}

TEST(ViewTest, NarrowColumnsOfAMatrix) {
  const Tensor x = iota({3, 4});
  const Tensor n = x.narrow(1, 1, 2);
  EXPECT_EQ(n.shape(), (Shape{3, 2}));
  EXPECT_EQ(n.strides(), (Strides{4, 1}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_FALSE(n.is_contiguous());
  EXPECT_EQ(n.to_vector<float>(), (Floats{1, 2, 5, 6, 9, 10}));
}

TEST(ViewTest, NarrowToZeroLength) {
  const Tensor x = arange(10);
  EXPECT_EQ(x.narrow(0, 10, 0).shape(), (Shape{0}));  // start == size is allowed
  EXPECT_EQ(x.narrow(0, 4, 0).numel(), 0);
  EXPECT_EQ(iota({3, 4}).narrow(1, 2, 0).shape(), (Shape{3, 0}));
}

TEST(ViewTest, NarrowThenFillWritesTheBase) {
  Tensor x = iota({3, 4});
  x.narrow(1, 1, 2).fill_(-1);
  EXPECT_EQ(x.to_vector<float>(), (Floats{0, -1, -1, 3, 4, -1, -1, 7, 8, -1, -1, 11}));
  x.narrow(0, -1, 1).narrow(1, 3, 1).fill_(100);  // the bottom-right corner
  EXPECT_EQ(x.at<float>({2, 3}), 100.f);
  EXPECT_EQ(x.at<float>({2, 2}), -1.f);
}

TEST(ViewTest, NarrowRejectsRangesOutOfBounds) {
  const Tensor x = arange(10);
  EXPECT_TG_THROW(x.narrow(0, 8, 3), IndexError, "narrow:", "start 8", "length 3", "size 10");
  EXPECT_TG_THROW(x.narrow(0, 11, 0), IndexError, "narrow:", "start 11", "size 10");
  EXPECT_TG_THROW(x.narrow(0, -11, 1), IndexError, "narrow:", "start -11", "size 10");
  EXPECT_TG_THROW(x.narrow(0, 0, -1), IndexError, "narrow:", "length -1", "size 10");
  EXPECT_TG_THROW(x.narrow(0, 1, kMax), IndexError, "narrow:", "9223372036854775807");
  EXPECT_TG_THROW(x.narrow(0, kMin, 1), IndexError, "narrow:", "-9223372036854775808");
}

TEST(ViewTest, NarrowRejectsBadDims) {
  EXPECT_TG_THROW(arange(10).narrow(1, 0, 1), IndexError, "narrow:", "dim 1", "rank 1");
  EXPECT_TG_THROW(scalar_tensor(1).narrow(0, 0, 1), ShapeError, "narrow:", "0-d");
}

// ---- slice

TEST(ViewTest, SliceTakesAHalfOpenRange) {
  const Tensor x = arange(10);
  const Tensor s = x.slice(0, 2, 7);
  EXPECT_EQ(s.to_vector<float>(), (Floats{2, 3, 4, 5, 6}));
  EXPECT_EQ(s.storage_offset(), 2);
  EXPECT_EQ(s.strides(), (Strides{1}));
  EXPECT_EQ(s.storage(), x.storage());
}

TEST(ViewTest, SliceWithAStepMultipliesTheStride) {
  const Tensor x = arange(10);
  const Tensor s = x.slice(0, 1, 10, 3);
  EXPECT_EQ(s.to_vector<float>(), (Floats{1, 4, 7}));
  EXPECT_EQ(s.strides(), (Strides{3}));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_EQ(x.slice(0, 0, 10, 4).to_vector<float>(), (Floats{0, 4, 8}));
  EXPECT_EQ(x.slice(0, 0, 9, 4).to_vector<float>(), (Floats{0, 4, 8}));
  EXPECT_EQ(x.slice(0, 0, 8, 4).to_vector<float>(), (Floats{0, 4}));
  EXPECT_EQ(x.slice(0, 2, 3, 5).to_vector<float>(), (Floats{2}));
}

TEST(ViewTest, SliceColumnsWithAStep) {
  const Tensor x = iota({3, 5});
  const Tensor s = x.slice(1, 0, 5, 2);
  EXPECT_EQ(s.shape(), (Shape{3, 3}));
  EXPECT_EQ(s.strides(), (Strides{5, 2}));
  EXPECT_EQ(s.to_vector<float>(), (Floats{0, 2, 4, 5, 7, 9, 10, 12, 14}));
  const Tensor odd = x.slice(-1, 1, kMax, 2);
  EXPECT_EQ(odd.storage_offset(), 1);
  EXPECT_EQ(odd.to_vector<float>(), (Floats{1, 3, 6, 8, 11, 13}));
  EXPECT_EQ(x.slice(0, 0, 3, 2).to_vector<float>(), (Floats{0, 1, 2, 3, 4, 10, 11, 12, 13, 14}));
}

TEST(ViewTest, SliceClampsLikePython) {
  const Tensor x = arange(10);
  EXPECT_EQ(x.slice(0, -3, 100).to_vector<float>(), (Floats{7, 8, 9}));        // x[-3:100]
  EXPECT_EQ(x.slice(0, -100, 3).to_vector<float>(), (Floats{0, 1, 2}));        // x[-100:3]
  EXPECT_EQ(x.slice(0, 5, -2).to_vector<float>(), (Floats{5, 6, 7}));          // x[5:-2]
  EXPECT_EQ(x.slice(0, -4, -1, 2).to_vector<float>(), (Floats{6, 8}));         // x[-4:-1:2]
  EXPECT_EQ(x.slice(0, kMin, kMax).to_vector<float>(), range(0, 10));          // x[:]
  EXPECT_EQ(x.slice(0, 0, kMax, 3).to_vector<float>(), (Floats{0, 3, 6, 9}));  // x[::3]
}

TEST(ViewTest, SliceCanBeEmpty) {
  const Tensor x = arange(10);
  EXPECT_EQ(x.slice(0, 5, 2).shape(), (Shape{0}));    // end before start
  EXPECT_EQ(x.slice(0, 20, 30).shape(), (Shape{0}));  // both past the end
  EXPECT_EQ(x.slice(0, -1, -5).shape(), (Shape{0}));
  EXPECT_EQ(x.slice(0, 4, 4, 3).shape(), (Shape{0}));
  EXPECT_TRUE(x.slice(0, 5, 2).to_vector<float>().empty());
  EXPECT_EQ(iota({3, 4}).slice(1, 3, 1).shape(), (Shape{3, 0}));
}

TEST(ViewTest, SliceWithAStepLargerThanTheDimKeepsOneElement) {
  // Python: list(range(5))[0:5:2**63-1] == [0]. The size computation must not overflow.
  EXPECT_EQ(arange(5).slice(0, 0, 5, kMax).to_vector<float>(), (Floats{0}));
  EXPECT_EQ(arange(5).slice(0, 3, kMax, kMax).to_vector<float>(), (Floats{3}));
  const Tensor rows = iota({4, 3}).slice(0, 1, 4, kMax);
  EXPECT_EQ(rows.shape(), (Shape{1, 3}));
  EXPECT_EQ(rows.to_vector<float>(), (Floats{3, 4, 5}));
  EXPECT_EQ(iota({4, 3}).slice(1, 2, kMax, kMax).to_vector<float>(), (Floats{2, 5, 8, 11}));
}

TEST(ViewTest, SliceThenFillWritesTheBase) {
  Tensor x = iota({2, 6});
  x.slice(1, 1, 6, 2).fill_(0);
  EXPECT_EQ(x.to_vector<float>(), (Floats{0, 0, 2, 0, 4, 0, 6, 0, 8, 0, 10, 0}));
}

TEST(ViewTest, SliceRejectsANonPositiveStep) {
  const Tensor x = arange(10);
  EXPECT_TG_THROW(x.slice(0, 0, 10, 0), ValueError, "slice:", "step", "0");
  EXPECT_TG_THROW(x.slice(0, 0, 10, -1), ValueError, "slice:", "step", "-1");
  EXPECT_TG_THROW(x.slice(0, 0, 10, kMin), ValueError, "slice:", "-9223372036854775808");
}

TEST(ViewTest, SliceRejectsBadDims) {
  EXPECT_TG_THROW(iota({2, 3}).slice(2, 0, 1), IndexError, "slice:", "dim 2", "rank 2");
  EXPECT_TG_THROW(iota({2, 3}).slice(-3, 0, 1), IndexError, "slice:", "dim -3", "rank 2");
  EXPECT_TG_THROW(scalar_tensor(1).slice(0, 0, 1), ShapeError, "slice:", "0-d");
}

// ---- select and operator[]

TEST(ViewTest, SelectDropsTheDim) {
  const Tensor x = iota({3, 4});
  const Tensor col = x.select(1, 2);
  EXPECT_EQ(col.shape(), (Shape{3}));
  EXPECT_EQ(col.strides(), (Strides{4}));
  EXPECT_EQ(col.storage_offset(), 2);
  EXPECT_EQ(col.storage(), x.storage());
  EXPECT_EQ(col.to_vector<float>(), (Floats{2, 6, 10}));
  const Tensor last = x.select(0, -1);
  EXPECT_EQ(last.storage_offset(), 8);
  EXPECT_EQ(last.to_vector<float>(), (Floats{8, 9, 10, 11}));
  EXPECT_EQ(x.select(-1, -4).to_vector<float>(), (Floats{0, 4, 8}));
}

TEST(ViewTest, SelectFromAThreeDTensor) {
  const Tensor x = iota({2, 3, 4});
  const Tensor m = x.select(1, 1);
  EXPECT_EQ(m.shape(), (Shape{2, 4}));
  EXPECT_EQ(m.strides(), (Strides{12, 1}));
  EXPECT_EQ(m.storage_offset(), 4);
  EXPECT_EQ(m.to_vector<float>(), (Floats{4, 5, 6, 7, 16, 17, 18, 19}));
}

TEST(ViewTest, IndexingChainsSelects) {
  const Tensor x = iota({3, 4});
  const Tensor e = x[1][2];
  EXPECT_EQ(e.dim(), 0u);
  EXPECT_EQ(e.storage_offset(), 6);
  EXPECT_EQ(e.item<float>(), 6.f);
  EXPECT_EQ(x[-1][-1].item<float>(), 11.f);
  const Tensor y = iota({2, 3, 4});
  EXPECT_EQ(y[1].shape(), (Shape{3, 4}));
  EXPECT_EQ(y[1].storage_offset(), 12);
  EXPECT_EQ(y[1][2][3].item<float>(), 23.f);
}

TEST(ViewTest, SelectRejectsIndicesOutOfRange) {
  const Tensor x = iota({3, 4});
  EXPECT_TG_THROW(x.select(0, 3), IndexError, "select:", "index 3", "size 3", "(3, 4)");
  EXPECT_TG_THROW(x.select(1, -5), IndexError, "select:", "index -5", "size 4", "(3, 4)");
  EXPECT_TG_THROW(x[7], IndexError, "select:", "index 7", "(3, 4)");
  EXPECT_TG_THROW(x.select(0, kMin), IndexError, "select:", "-9223372036854775808");
}

TEST(ViewTest, SelectRejectsBadDims) {
  EXPECT_TG_THROW(iota({3, 4}).select(2, 0), IndexError, "select:", "dim 2", "rank 2");
  EXPECT_TG_THROW(scalar_tensor(1).select(0, 0), ShapeError, "select:", "0-d");
  EXPECT_TG_THROW(iota({3, 4})[0][0][0], ShapeError, "select:", "0-d");
}

// ---- writing through views

TEST(ViewTest, WritingThroughATransposedSelectChangesTheBase) {
  Tensor x = iota({2, 3});
  // Row 1 of x.T is column 1 of x: elements (0, 1) and (1, 1).
  x.transpose(0, 1).select(0, 1).fill_(7);
  EXPECT_EQ(x.to_vector<float>(), (Floats{0, 7, 2, 3, 7, 5}));
}

TEST(ViewTest, CopyIntoAViewWritesOnlyItsElements) {
  Tensor x = zeros({3, 4});
  x.narrow(1, 1, 2).t().copy_(tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3}));
  // x.narrow(1, 1, 2).t()[i][j] is x[j][1 + i].
  EXPECT_EQ(x.to_vector<float>(), (Floats{0, 1, 4, 0, 0, 2, 5, 0, 0, 3, 6, 0}));
}

TEST(ViewTest, WritesToTheBaseAreSeenByEveryView) {
  Tensor x = iota({2, 3});
  const Tensor v = x.view({3, 2});
  const Tensor t = x.t();
  const Tensor col = x.select(1, 0);
  x.select(0, 1).fill_(-1);
  EXPECT_EQ(v.to_vector<float>(), (Floats{0, 1, 2, -1, -1, -1}));
  EXPECT_EQ(t.to_vector<float>(), (Floats{0, -1, 1, -1, 2, -1}));
  EXPECT_EQ(col.to_vector<float>(), (Floats{0, -1}));
}

TEST(ViewTest, WritingThroughAChainOfViews) {
  // x[1:4:2, 1:4].T, filled with 1; compare against the element-by-element rule.
  Tensor x = zeros({5, 5});
  x.slice(0, 1, 4, 2).narrow(1, 1, 3).t().fill_(1);
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      const bool written = (i == 1 || i == 3) && j >= 1 && j <= 3;
      EXPECT_EQ(x.at<float>({i, j}), written ? 1.f : 0.f) << i << ", " << j;
    }
  }
}

TEST(ViewTest, WritingThroughAZeroDView) {
  Tensor x = arange(6);
  x[4].fill_(-3);
  x.view({2, 3})[0][1].view({1}).fill_(-9);
  EXPECT_EQ(x.to_vector<float>(), (Floats{0, -9, 2, 3, -3, 5}));
}

// ---- a real rearrangement: image-like (B, C, H, W) to token-like (B, H*W, C)

TEST(ViewTest, ChannelsFirstToTokensRearrangement) {
  constexpr int64_t B = 2, C = 3, H = 4, W = 5;
  const Tensor x = iota({B, C, H, W});
  const Tensor tokens = x.permute({0, 2, 3, 1}).reshape({B, H * W, C});
  EXPECT_EQ(tokens.shape(), (Shape{B, H * W, C}));
  // H and W stay adjacent after the permute, so they merge without a copy.
  EXPECT_EQ(tokens.storage(), x.storage());
  EXPECT_EQ(tokens.strides(), (Strides{C * H * W, 1, H * W}));

  // tokens[b][p][c] == x[b][c][h][w] with p = h * W + w, i.e. index b*CHW + c*HW + p.
  const Floats values = tokens.to_vector<float>();
  ASSERT_EQ(values.size(), static_cast<size_t>(B * H * W * C));
  size_t flat = 0;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t p = 0; p < H * W; ++p) {
      for (int64_t c = 0; c < C; ++c, ++flat) {
        const float expected = static_cast<float>(b * C * H * W + c * H * W + p);
        EXPECT_EQ(values[flat], expected) << "b " << b << " p " << p << " c " << c;
        EXPECT_EQ(tokens.at<float>({b, p, c}), expected);
      }
    }
  }

  // Flattening the tokens with their channels cannot be a view: it copies.
  const Tensor rows = tokens.reshape({B, H * W * C});
  EXPECT_NE(rows.storage(), x.storage());
  EXPECT_EQ(rows.to_vector<float>(), values);

  // And back: (B, H*W, C) -> (B, H, W, C) -> (B, C, H, W) recovers x.
  const Tensor back = tokens.view({B, H, W, C}).permute({0, 3, 1, 2});
  EXPECT_EQ(back.shape(), x.shape());
  EXPECT_EQ(back.strides(), x.strides());
  EXPECT_EQ(back.to_vector<float>(), range(0, static_cast<int>(B * C * H * W)));
}

// ---- flatten and unflatten

TEST(ViewTest, FlattenMergesARangeOfDims) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_EQ(x.flatten().shape(), (Shape{24}));
  EXPECT_EQ(x.flatten().storage(), x.storage());
  EXPECT_EQ(x.flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(0, 1).shape(), (Shape{6, 4}));
  EXPECT_EQ(x.flatten(0, 1).strides(), (Strides{4, 1}));
  EXPECT_EQ(x.flatten(-2, -1).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(1, 1).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(x.flatten(0, -2).to_vector<float>(), range(0, 24));
}

TEST(ViewTest, FlattenIsAViewOnlyWhenTheMergedDimsAreContiguous) {
  const Tensor n = iota({2, 3, 4}).narrow(2, 0, 2);  // (2, 3, 2), strides (12, 4, 1)
  const Tensor rows = n.flatten(0, 1);               // dims 0 and 1 merge: 12 == 3 * 4
  EXPECT_EQ(rows.storage(), n.storage());
  EXPECT_EQ(rows.strides(), (Strides{4, 1}));
  EXPECT_EQ(rows.to_vector<float>(), (Floats{0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21}));
  const Tensor cols = n.flatten(1);  // dims 1 and 2 do not: 4 != 2 * 1
  EXPECT_NE(cols.storage(), n.storage());
  EXPECT_EQ(cols.shape(), (Shape{2, 6}));
  EXPECT_EQ(cols.to_vector<float>(), rows.to_vector<float>());

  const Tensor t = iota({2, 3}).t().flatten();
  EXPECT_EQ(t.to_vector<float>(), (Floats{0, 3, 1, 4, 2, 5}));
}

TEST(ViewTest, FlattenRejectsBadDims) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_TG_THROW(x.flatten(2, 1), ShapeError, "flatten:", "start_dim 2", "end_dim 1");
  EXPECT_TG_THROW(x.flatten(-1, 0), ShapeError, "flatten:", "start_dim -1", "end_dim 0");
  EXPECT_TG_THROW(x.flatten(3), IndexError, "flatten:", "dim 3", "rank 3");
  EXPECT_TG_THROW(x.flatten(0, -4), IndexError, "flatten:", "dim -4", "rank 3");
}

TEST(ViewTest, UnflattenSplitsADim) {
  const Tensor x = iota({2, 12});
  const Tensor u = x.unflatten(1, {3, 4});
  EXPECT_EQ(u.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(u.strides(), (Strides{12, 4, 1}));
  EXPECT_EQ(u.storage(), x.storage());
  EXPECT_EQ(u.to_vector<float>(), range(0, 24));
  EXPECT_EQ(x.unflatten(-1, {-1, 4}).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(x.unflatten(1, {2, -1, 3}).shape(), (Shape{2, 2, 2, 3}));
  EXPECT_EQ(x.unflatten(0, {1, 2}).shape(), (Shape{1, 2, 12}));
  EXPECT_EQ(x.unflatten(1, {12}).shape(), (Shape{2, 12}));
}

TEST(ViewTest, UnflattenOfATransposedTensorIsAView) {
  const Tensor t = iota({12, 2}).t();  // (2, 12), strides (1, 2)
  const Tensor u = t.unflatten(1, {3, 4});
  EXPECT_EQ(u.strides(), (Strides{1, 8, 2}));
  EXPECT_EQ(u.storage(), t.storage());
  // u[i][a][b] == t[i][4a + b] == (4a + b) * 2 + i
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t a = 0; a < 3; ++a) {
      for (int64_t b = 0; b < 4; ++b) {
        EXPECT_EQ(u.at<float>({i, a, b}), static_cast<float>((4 * a + b) * 2 + i));
      }
    }
  }
}

TEST(ViewTest, UnflattenRejectsSizesThatDoNotMultiplyToTheDim) {
  const Tensor x = iota({2, 12});
  EXPECT_TG_THROW(x.unflatten(1, {5, 2}), ShapeError, "unflatten:", "(5, 2)", "12");
  EXPECT_TG_THROW(x.unflatten(1, {-1, 5}), ShapeError, "unflatten:", "(-1, 5)", "12");
  EXPECT_TG_THROW(x.unflatten(0, {3}), ShapeError, "unflatten:", "(3)", "2");
  EXPECT_TG_THROW(x.unflatten(1, {-1, -1}), ShapeError, "unflatten:", "only one");
  EXPECT_TG_THROW(x.unflatten(1, {-3, -4}), ShapeError, "unflatten:", "-3");
  EXPECT_TG_THROW(x.unflatten(1, {}), ShapeError, "unflatten:", "empty");
}

TEST(ViewTest, UnflattenRejectsBadDims) {
  EXPECT_TG_THROW(iota({2, 12}).unflatten(2, {1}), IndexError, "unflatten:", "dim 2", "rank 2");
  // A 0-d tensor has no dim to split (PyTorch refuses too).
  EXPECT_TG_THROW(scalar_tensor(1).unflatten(0, {1}), ShapeError, "unflatten:", "0-d");
  EXPECT_TG_THROW(arange(6)[4].unflatten(-1, {-1}), ShapeError, "unflatten:", "0-d");
}

// ---- contiguous and is_contiguous

TEST(ViewTest, IsContiguousFollowsTheStrides) {
  const Tensor x = iota({3, 4});
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_FALSE(x.t().is_contiguous());
  EXPECT_TRUE(x.narrow(0, 1, 2).is_contiguous());  // whole rows, with an offset
  EXPECT_FALSE(x.narrow(1, 1, 2).is_contiguous());
  EXPECT_FALSE(x.slice(1, 0, 4, 2).is_contiguous());
  EXPECT_TRUE(x.select(0, 1).is_contiguous());
  EXPECT_FALSE(x.select(1, 1).is_contiguous());
  EXPECT_FALSE(arange(3).expand({2, 3}).is_contiguous());
  EXPECT_TRUE(scalar_tensor(1).is_contiguous());
}

TEST(ViewTest, IsContiguousIgnoresSizeOneDims) {
  // (1, 3).t() has strides (1, 3); the 3 is never used.
  const Tensor t = iota({1, 3}).t();
  EXPECT_EQ(t.strides(), (Strides{1, 3}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(iota({3, 4}).narrow(1, 2, 1).is_contiguous());  // (3, 1), strides (4, 1)
  EXPECT_TRUE(iota({3, 4}).narrow(0, 2, 1).narrow(1, 1, 2).is_contiguous());  // (1, 2)
  EXPECT_TRUE(arange(3).expand({1, 3}).is_contiguous());
  EXPECT_TRUE(arange(10).slice(0, 3, 4, 5).is_contiguous());  // one element, stride 5
}

TEST(ViewTest, EmptyTensorsAreContiguous) {
  const Tensor e = zeros({0, 3});
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_TRUE(e.t().is_contiguous());
  EXPECT_TRUE(zeros({2, 0, 4}).permute({2, 0, 1}).is_contiguous());
  EXPECT_TRUE(iota({3, 4}).narrow(1, 1, 0).is_contiguous());
}

TEST(ViewTest, ContiguousReturnsTheSameTensorWhenAlreadyContiguous) {
  const Tensor x = iota({2, 3});
  EXPECT_EQ(x.contiguous().impl(), x.impl());
  const Tensor rows = iota({4, 3}).narrow(0, 1, 2);
  EXPECT_EQ(rows.contiguous().impl(), rows.impl());
  EXPECT_EQ(rows.contiguous().storage_offset(), 3);
}

TEST(ViewTest, ContiguousCopiesANonContiguousTensor) {
  Tensor x = iota({2, 3});
  Tensor c = x.t().contiguous();
  EXPECT_NE(c.storage(), x.storage());
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.strides(), (Strides{2, 1}));
  EXPECT_EQ(c.storage_offset(), 0);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_vector<float>(), (Floats{0, 3, 1, 4, 2, 5}));
  c.fill_(1);
  EXPECT_EQ(x.to_vector<float>(), range(0, 6));  // a copy: writes do not reach x
  const Tensor e = tensor({1.f, 2.f}).expand({3, 2}).contiguous();
  EXPECT_EQ(e.strides(), (Strides{2, 1}));
  EXPECT_EQ(e.to_vector<float>(), (Floats{1, 2, 1, 2, 1, 2}));
}

// ---- zero-size tensors

TEST(ViewTest, ViewsOfAZeroByThreeTensor) {
  Tensor e = zeros({0, 3});
  EXPECT_EQ(e.view({-1}).shape(), (Shape{0}));
  EXPECT_EQ(e.view({3, 0}).shape(), (Shape{3, 0}));
  EXPECT_EQ(e.view({0, 3, 1}).shape(), (Shape{0, 3, 1}));
  EXPECT_EQ(e.view({-1, 3}).shape(), (Shape{0, 3}));
  EXPECT_EQ(e.reshape({3, -1}).shape(), (Shape{3, 0}));
  EXPECT_EQ(e.reshape({3, -1}).storage(), e.storage());
  EXPECT_EQ(e.t().shape(), (Shape{3, 0}));
  EXPECT_EQ(e.t().strides(), (Strides{1, 3}));
  EXPECT_EQ(e.t().view({-1}).shape(), (Shape{0}));  // no elements: any view works
  EXPECT_EQ(e.unsqueeze(0).shape(), (Shape{1, 0, 3}));
  EXPECT_EQ(e.select(1, 2).shape(), (Shape{0}));
  EXPECT_EQ(e.narrow(0, 0, 0).shape(), (Shape{0, 3}));
  EXPECT_EQ(e.slice(1, 1, 3).shape(), (Shape{0, 2}));
  EXPECT_EQ(e.expand({2, 0, 3}).shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(e.flatten().shape(), (Shape{0}));
  EXPECT_EQ(e.squeeze().shape(), (Shape{0, 3}));
  EXPECT_TRUE(e.to_vector<float>().empty());
  e.t().fill_(1);  // nothing to write, nothing to crash
  EXPECT_EQ(e.numel(), 0);
}

TEST(ViewTest, ViewsOfATwoByZeroByFourTensor) {
  const Tensor z = zeros({2, 0, 4});
  EXPECT_EQ(z.strides(), (Strides{4, 4, 1}));
  EXPECT_EQ(z.view({2, -1}).shape(), (Shape{2, 0}));
  EXPECT_EQ(z.view({-1, 4}).shape(), (Shape{0, 4}));
  EXPECT_EQ(z.view({0}).storage(), z.storage());
  EXPECT_EQ(z.select(0, 1).shape(), (Shape{0, 4}));
  EXPECT_EQ(z.narrow(2, 1, 2).shape(), (Shape{2, 0, 2}));
  EXPECT_EQ(z.permute({2, 0, 1}).shape(), (Shape{4, 2, 0}));
  EXPECT_EQ(z.permute({2, 0, 1}).strides(), (Strides{1, 4, 4}));
  EXPECT_EQ(z.transpose(0, 1).shape(), (Shape{0, 2, 4}));
  EXPECT_EQ(z.flatten().shape(), (Shape{0}));
  EXPECT_EQ(z.flatten(1).shape(), (Shape{2, 0}));
  EXPECT_EQ(z.unflatten(2, {2, 2}).shape(), (Shape{2, 0, 2, 2}));
  EXPECT_EQ(z.unflatten(1, {0, 5}).shape(), (Shape{2, 0, 5, 4}));
  EXPECT_EQ(z.unsqueeze(-1).shape(), (Shape{2, 0, 4, 1}));
  EXPECT_EQ(z.squeeze().shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(z.slice(2, 0, 4, 3).shape(), (Shape{2, 0, 2}));
  EXPECT_TRUE(z.contiguous().to_vector<float>().empty());
}

TEST(ViewTest, ZeroSizeErrorPaths) {
  const Tensor z = zeros({2, 0, 4});
  EXPECT_TG_THROW(z.select(1, 0), IndexError, "select:", "index 0", "size 0", "(2, 0, 4)");
  EXPECT_TG_THROW(z.narrow(1, 0, 1), IndexError, "narrow:", "length 1", "size 0");
  EXPECT_TG_THROW(z.view({1}), ShapeError, "view:", "(1)", "0 elements");
  EXPECT_TG_THROW(z.view({0, -1}), ShapeError, "view:", "(0, -1)");
  EXPECT_TG_THROW(z.unflatten(1, {-1, 0}), ShapeError, "unflatten:", "(-1, 0)");
  EXPECT_TG_THROW(z.expand({2, 3, 4}), ShapeError, "expand:", "(2, 0, 4)", "(2, 3, 4)");
}

// ---- 0-d tensors

TEST(ViewTest, ViewsOfAZeroDTensor) {
  const Tensor s = scalar_tensor(5);
  const Tensor one = s.view({1});
  EXPECT_EQ(one.shape(), (Shape{1}));
  EXPECT_EQ(one.strides(), (Strides{1}));
  EXPECT_EQ(one.storage(), s.storage());
  EXPECT_EQ(one.to_vector<float>(), (Floats{5}));
  EXPECT_EQ(s.view({}).shape(), Shape{});
  EXPECT_EQ(s.view({}).item<float>(), 5.f);
  EXPECT_EQ(s.view({1, 1, 1}).shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(s.view({-1}).shape(), (Shape{1}));
  EXPECT_EQ(s.reshape({-1}).shape(), (Shape{1}));
  EXPECT_EQ(s.reshape({-1}).storage(), s.storage());
  EXPECT_EQ(s.unsqueeze(0).shape(), (Shape{1}));
  EXPECT_EQ(s.unsqueeze(0).strides(), (Strides{1}));
  EXPECT_EQ(s.unsqueeze(-1).shape(), (Shape{1}));
  EXPECT_EQ(s.flatten().shape(), (Shape{1}));
  EXPECT_EQ(s.squeeze().shape(), Shape{});
  EXPECT_EQ(s.squeeze(0).shape(), Shape{});
  EXPECT_EQ(s.squeeze(-1).shape(), Shape{});
  EXPECT_EQ(s.permute({}).shape(), Shape{});
  EXPECT_EQ(s.transpose(0, -1).shape(), Shape{});
  EXPECT_EQ(s.expand({3}).strides(), (Strides{0}));
  EXPECT_EQ(s.expand({3}).to_vector<float>(), (Floats{5, 5, 5}));
  EXPECT_EQ(s.view({1}).view({}).item<float>(), 5.f);
}

TEST(ViewTest, ZeroDViewKeepsItsOffset) {
  Tensor x = arange(6);
  const Tensor s = x[4];
  ASSERT_EQ(s.storage_offset(), 4);
  const Tensor v = s.view({1, 1});
  EXPECT_EQ(v.storage_offset(), 4);
  EXPECT_EQ(s.unsqueeze(0).storage_offset(), 4);
  EXPECT_EQ(s.reshape({-1}).storage_offset(), 4);
  s.view({1}).fill_(-1);  // writes element 4 of x
  EXPECT_EQ(x.to_vector<float>(), (Floats{0, 1, 2, 3, -1, 5}));
}

TEST(ViewTest, ZeroDErrorPaths) {
  const Tensor s = scalar_tensor(5);
  EXPECT_TG_THROW(s.view({2}), ShapeError, "view:", "(2)", "1 elements");
  EXPECT_TG_THROW(s.view({0}), ShapeError, "view:", "(0)", "1 elements");
  EXPECT_TG_THROW(s.reshape({-1, -1}), ShapeError, "reshape:", "only one");
  EXPECT_TG_THROW(s.transpose(0, 1), IndexError, "transpose:", "dim 1", "rank 0");
  EXPECT_TG_THROW(s.flatten(2, 3).shape(), IndexError, "flatten:", "dim 2", "rank 0");
}

// ---- every view agrees with an independent oracle

// Whether `new_shape` can view a tensor whose elements, in row-major order, sit at the
// storage positions `addr`: new dim k must step by addr[contiguous stride k] - addr[0],
// and those strides must reproduce every address. Fills `strides` for dims of size > 1.
bool view_exists(const Floats& addr, const Shape& new_shape, Strides& strides) {
  const Strides cs = contiguous_strides(new_shape);
  strides = Strides(new_shape.size(), 0);
  for (size_t k = 0; k < new_shape.size(); ++k) {
    if (new_shape[k] > 1) strides[k] = static_cast<int64_t>(addr[cs[k]] - addr[0]);
  }
  for (size_t flat = 0; flat < addr.size(); ++flat) {
    int64_t predicted = static_cast<int64_t>(addr[0]), rest = static_cast<int64_t>(flat);
    for (size_t k = 0; k < new_shape.size(); ++k) {
      predicted += rest / cs[k] * strides[k];
      rest %= cs[k];
    }
    if (predicted != static_cast<int64_t>(addr[flat])) return false;
  }
  return true;
}

TEST(ViewTest, RandomViewsMatchABruteForceOracle) {
  std::mt19937 rng(12345);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int viewed = 0, refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    // A random base of up to 4 dims of sizes 1..3 (size-1 dims are common on purpose).
    Shape shape;
    for (int64_t r = pick(1, 4); r > 0; --r) shape.push_back(pick(1, 3));
    Tensor t = iota(shape);
    // Scramble it: a random permutation, maybe a narrow, a step, an expand.
    DimVec perm;
    for (size_t i = 0; i < t.dim(); ++i) perm.push_back(static_cast<int64_t>(i));
    std::shuffle(perm.begin(), perm.end(), rng);
    t = t.permute(perm);
    const auto d = static_cast<int64_t>(pick(0, static_cast<int64_t>(t.dim()) - 1));
    switch (pick(0, 3)) {
      case 0:
        if (t.size(d) > 1) t = t.narrow(d, 1, t.size(d) - 1);
        break;
      case 1: t = t.slice(d, 0, kMax, 2); break;
      case 2: {
        Shape target = t.shape();
        target.insert(0, 2);
        t = t.expand(target);
        break;
      }
      default: break;
    }
    // A random target shape with the same number of elements: split numel into its prime
    // factors, group them in a random order, and sprinkle in size-1 dims.
    std::vector<int64_t> factors;
    for (int64_t n = t.numel(), p = 2; n > 1;) {
      if (n % p == 0) {
        factors.push_back(p);
        n /= p;
      } else {
        ++p;
      }
    }
    std::shuffle(factors.begin(), factors.end(), rng);
    Shape target;
    for (size_t i = 0; i < factors.size(); ++i) {
      if (i == 0 || pick(0, 1) == 0) {
        target.push_back(factors[i]);
      } else {
        target[target.size() - 1] *= factors[i];
      }
    }
    for (int64_t ones = pick(0, 2); ones > 0; --ones) {
      target.insert(static_cast<size_t>(pick(0, static_cast<int64_t>(target.size()))), 1);
    }

    const Floats addr = t.to_vector<float>();
    const std::string what = fmt::format("view {} of shape {} strides {} offset {}", target,
                                         t.shape(), t.strides(), t.storage_offset());
    Strides expected;
    if (view_exists(addr, target, expected)) {
      ++viewed;
      Tensor v;
      ASSERT_NO_THROW(v = t.view(target)) << what;
      EXPECT_EQ(v.shape(), target) << what;
      EXPECT_EQ(v.storage_offset(), static_cast<int64_t>(addr[0])) << what;
      for (size_t k = 0; k < target.size(); ++k) {
        if (target[k] > 1) {
          EXPECT_EQ(v.strides()[k], expected[k]) << what << " dim " << k;
        }
      }
      EXPECT_EQ(v.to_vector<float>(), addr) << what;
      EXPECT_EQ(t.reshape(target).storage(), t.storage()) << what;
    } else {
      ++refused;
      EXPECT_THROW((void)t.view(target), ShapeError) << what;
      const Tensor r = t.reshape(target);
      EXPECT_NE(r.storage(), t.storage()) << what;
      EXPECT_EQ(r.shape(), target) << what;
      EXPECT_EQ(r.to_vector<float>(), addr) << what;
    }
  }
  EXPECT_GT(viewed, 500);
  EXPECT_GT(refused, 500);
}

}  // namespace
}  // namespace tg
