// tests/core/shape_test.cpp — DimVec (the inline small vector behind Shape and Strides),
// checked_numel, contiguous_strides, wrap_dim and the "(2, 3)" formatting.
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// The elements of a DimVec as a std::vector, for readable EXPECT_EQs.
std::vector<int64_t> values(const DimVec& v) { return {v.begin(), v.end()}; }

// A DimVec holding 0, 1, ..., n-1.
DimVec iota(int64_t n) {
  DimVec v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// ---- DimVec: construction

TEST(DimVecTest, DefaultIsEmptyAndInline) {
  DimVec v;
  EXPECT_EQ(v.size(), 0u);
  EXPECT_TRUE(v.empty());
  EXPECT_FALSE(v.on_heap());
  EXPECT_EQ(v.begin(), v.end());
}

TEST(DimVecTest, InitializerListKeepsValuesInOrder) {
  DimVec v{4, -1, 0, 7};
  EXPECT_EQ(v.size(), 4u);
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(values(v), (std::vector<int64_t>{4, -1, 0, 7}));
  EXPECT_EQ(v[0], 4);
  EXPECT_EQ(v[1], -1);
  EXPECT_EQ(v.back(), 7);
  EXPECT_EQ(v.data()[3], 7);
}

TEST(DimVecTest, BracesMakeAListButParenthesesMakeRepeatedValues) {
  // DimVec{2, 3} is the list (2, 3); DimVec(2, 3) is two copies of 3.
  EXPECT_EQ(values(DimVec{2, 3}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(DimVec(size_t{2}, 3)), (std::vector<int64_t>{3, 3}));
}

TEST(DimVecTest, SizeValueConstructorFillsInlineAndOnHeap) {
  DimVec small(size_t{8}, -5);
  EXPECT_EQ(values(small), std::vector<int64_t>(8, -5));
  EXPECT_FALSE(small.on_heap());

  DimVec big(size_t{9}, 11);
  EXPECT_EQ(values(big), std::vector<int64_t>(9, 11));
  EXPECT_TRUE(big.on_heap());

  DimVec none(size_t{0}, 3);
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.on_heap());
}

TEST(DimVecTest, SpanConstructorCopiesTheElements) {
  std::vector<int64_t> src{9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  DimVec v{std::span<const int64_t>(src)};
  EXPECT_EQ(values(v), src);
  EXPECT_TRUE(v.on_heap());
  src[0] = 100;  // the DimVec owns its copy
  EXPECT_EQ(v[0], 9);
  EXPECT_EQ(values(DimVec{std::span<const int64_t>(src.data(), 3)}),
            (std::vector<int64_t>{100, 8, 7}));
}

TEST(DimVecTest, OnHeapOnlyBeyondEightElements) {
  for (int64_t n = 0; n <= 20; ++n) {
    const DimVec v(static_cast<size_t>(n), n);
    EXPECT_EQ(v.on_heap(), n > 8) << "size " << n;
    EXPECT_EQ(v.size(), static_cast<size_t>(n));
  }
  EXPECT_EQ(DimVec::kInlineRank, 8u);
}

// ---- DimVec: copy and move

TEST(DimVecTest, CopyOfInlineVectorIsIndependent) {
  DimVec a{1, 2, 3};
  DimVec b = a;
  EXPECT_EQ(values(b), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(b.on_heap());
  b[0] = 42;
  b.push_back(4);
  EXPECT_EQ(values(a), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(values(b), (std::vector<int64_t>{42, 2, 3, 4}));
}

TEST(DimVecTest, CopyOfHeapVectorIsIndependent) {
  DimVec a = iota(12);
  DimVec b = a;
  EXPECT_TRUE(b.on_heap());
  EXPECT_EQ(values(b), values(iota(12)));
  EXPECT_NE(a.data(), b.data());  // its own heap array, not a shared one
  b[11] = -1;
  EXPECT_EQ(a[11], 11);
}

TEST(DimVecTest, MoveOfInlineVectorKeepsValues) {
  DimVec a{5, 6, 7};
  DimVec b = std::move(a);
  EXPECT_EQ(values(b), (std::vector<int64_t>{5, 6, 7}));
  EXPECT_FALSE(b.on_heap());
}

TEST(DimVecTest, MoveOfHeapVectorStealsTheArray) {
  DimVec a = iota(10);
  const int64_t* heap = a.data();
  DimVec b = std::move(a);
  EXPECT_TRUE(b.on_heap());
  EXPECT_EQ(b.data(), heap);  // no copy: the heap array changed hands
  EXPECT_EQ(values(b), values(iota(10)));
}

TEST(DimVecTest, MovedFromVectorIsReusable) {
  DimVec a = iota(10);
  DimVec b = std::move(a);
  a.push_back(3);  // NOLINT(bugprone-use-after-move): reuse after move is allowed
  a.push_back(4);
  EXPECT_EQ(values(a), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values(b), values(iota(10)));

  DimVec c{1, 2};
  DimVec d = std::move(c);
  c.push_back(9);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(values(c), (std::vector<int64_t>{9}));
  EXPECT_EQ(values(d), (std::vector<int64_t>{1, 2}));
}

TEST(DimVecTest, CopyAssignmentBetweenInlineAndHeap) {
  DimVec small{1, 2};
  DimVec big = iota(11);

  DimVec x{7, 7, 7};
  x = big;  // inline <- heap
  EXPECT_EQ(values(x), values(iota(11)));
  EXPECT_TRUE(x.on_heap());

  DimVec y = iota(9);
  y = small;  // heap <- inline
  EXPECT_EQ(values(y), (std::vector<int64_t>{1, 2}));

  DimVec z = iota(9);
  z = big;  // heap <- bigger heap
  EXPECT_EQ(values(z), values(iota(11)));
  z[0] = 100;
  EXPECT_EQ(big[0], 0);  // still independent

  DimVec& same = z;
  z = same;  // self-assignment keeps the values
  EXPECT_EQ(z.size(), 11u);
  EXPECT_EQ(z[0], 100);
  EXPECT_EQ(z[10], 10);
}

TEST(DimVecTest, MoveAssignmentBetweenInlineAndHeap) {
  DimVec x = iota(9);
  x = DimVec{4, 5};  // heap <- inline
  EXPECT_EQ(values(x), (std::vector<int64_t>{4, 5}));

  DimVec y{1};
  y = iota(13);  // inline <- heap
  EXPECT_EQ(values(y), values(iota(13)));
  EXPECT_TRUE(y.on_heap());

  DimVec z = iota(10);
  z = iota(16);  // heap <- heap
  EXPECT_EQ(values(z), values(iota(16)));
}

// ---- DimVec: growing and shrinking across the inline boundary

TEST(DimVecTest, PushBackCrossesTheInlineBoundary) {
  DimVec v;
  for (int64_t i = 0; i < 8; ++i) {
    v.push_back(10 * i);
    EXPECT_FALSE(v.on_heap()) << "after " << i + 1 << " elements";
  }
  v.push_back(80);
  EXPECT_TRUE(v.on_heap());
  for (int64_t i = 9; i < 40; ++i) v.push_back(10 * i);  // several heap growths
  ASSERT_EQ(v.size(), 40u);
  for (size_t i = 0; i < 40; ++i) EXPECT_EQ(v[i], static_cast<int64_t>(10 * i)) << i;
  EXPECT_EQ(v.back(), 390);
}

TEST(DimVecTest, InsertShiftsTheTail) {
  DimVec v{1, 2, 3};
  v.insert(0, 0);
  v.insert(2, 9);
  v.insert(v.size(), 4);  // at the end
  EXPECT_EQ(values(v), (std::vector<int64_t>{0, 1, 9, 2, 3, 4}));
  EXPECT_FALSE(v.on_heap());

  DimVec e;
  e.insert(0, 5);
  EXPECT_EQ(values(e), (std::vector<int64_t>{5}));
}

TEST(DimVecTest, InsertIntoAFullInlineVectorMovesToTheHeap) {
  DimVec v = iota(8);
  ASSERT_FALSE(v.on_heap());
  v.insert(3, -7);
  EXPECT_TRUE(v.on_heap());
  EXPECT_EQ(values(v), (std::vector<int64_t>{0, 1, 2, -7, 3, 4, 5, 6, 7}));
  v.insert(0, -1);
  EXPECT_EQ(values(v), (std::vector<int64_t>{-1, 0, 1, 2, -7, 3, 4, 5, 6, 7}));
}

TEST(DimVecTest, EraseShiftsTheTailDown) {
  DimVec v{0, 1, 2, 3, 4};
  v.erase(0);
  EXPECT_EQ(values(v), (std::vector<int64_t>{1, 2, 3, 4}));
  v.erase(2);
  EXPECT_EQ(values(v), (std::vector<int64_t>{1, 2, 4}));
  v.erase(v.size() - 1);
  EXPECT_EQ(values(v), (std::vector<int64_t>{1, 2}));
  v.erase(0);
  v.erase(0);
  EXPECT_TRUE(v.empty());
}

TEST(DimVecTest, EraseAcrossTheInlineBoundaryKeepsValues) {
  DimVec v = iota(10);
  ASSERT_TRUE(v.on_heap());
  v.erase(4);
  v.erase(0);  // 8 elements left
  EXPECT_EQ(values(v), (std::vector<int64_t>{1, 2, 3, 5, 6, 7, 8, 9}));
  EXPECT_EQ(v, (DimVec{1, 2, 3, 5, 6, 7, 8, 9}));  // equal to an inline one
  v.push_back(10);
  v.insert(0, 0);
  EXPECT_EQ(values(v), (std::vector<int64_t>{0, 1, 2, 3, 5, 6, 7, 8, 9, 10}));
}

TEST(DimVecTest, SpanViewsTheElements) {
  const DimVec v = iota(9);
  const std::span<const int64_t> s = v.span();
  EXPECT_EQ(s.size(), 9u);
  EXPECT_EQ(s.data(), v.data());
  EXPECT_EQ(s[8], 8);
  EXPECT_TRUE(DimVec{}.span().empty());
}

TEST(DimVecTest, EqualityComparesSizesAndValues) {
  EXPECT_EQ(DimVec{}, DimVec{});
  EXPECT_EQ((DimVec{2, 3}), (DimVec{2, 3}));
  EXPECT_NE((DimVec{2, 3}), (DimVec{3, 2}));
  EXPECT_NE((DimVec{2, 3}), (DimVec{2, 3, 1}));  // a prefix is not equal
  EXPECT_NE((DimVec{2}), DimVec{});
  EXPECT_EQ(iota(12), iota(12));
  EXPECT_NE(iota(12), iota(11));
  DimVec changed = iota(12);
  changed[11] = 0;
  EXPECT_NE(changed, iota(12));
}

// ---- checked_numel

TEST(ShapeTest, CheckedNumelMultipliesTheSizes) {
  EXPECT_EQ(checked_numel({2, 3, 4}, "op"), 24);
  EXPECT_EQ(checked_numel({7}, "op"), 7);
  EXPECT_EQ(checked_numel({}, "op"), 1);  // a 0-d tensor has one element
  EXPECT_EQ(checked_numel({0, 5}, "op"), 0);
  EXPECT_EQ(checked_numel({5, 0, 3}, "op"), 0);
  EXPECT_EQ(checked_numel({1, 1, 1, 1, 1, 1, 1, 1, 1, 2}, "op"), 2);  // rank 10, on the heap
  EXPECT_EQ(checked_numel({kMax, 1}, "op"), kMax);
}

TEST(ShapeTest, CheckedNumelAcceptsTheLargestProduct) {
  // 3037000499^2 = 9223372030926249001 still fits in int64; one more does not.
  EXPECT_EQ(checked_numel({3037000499, 3037000499}, "op"), 9223372030926249001);
  EXPECT_TG_THROW(checked_numel({3037000500, 3037000500}, "zeros"), ShapeError, "zeros",
                  "(3037000500, 3037000500)", "int64");
}

TEST(ShapeTest, CheckedNumelOverflowNamesOpAndShape) {
  EXPECT_TG_THROW(checked_numel({int64_t{1} << 32, int64_t{1} << 32}, "empty"), ShapeError,
                  "empty:", "(4294967296, 4294967296)", "int64");
  EXPECT_TG_THROW(checked_numel({kMax, 2}, "reshape"), ShapeError,
                  "reshape:", "(9223372036854775807, 2)");
}

TEST(ShapeTest, CheckedNumelIsZeroWithAZeroDimWhateverItsPosition) {
  EXPECT_EQ(checked_numel({kMax, 2, 0}, "op"), 0);
  EXPECT_EQ(checked_numel({0, kMax, 2}, "op"), 0);
  EXPECT_EQ(checked_numel({kMax, 0, 2}, "op"), 0);
}

TEST(ShapeTest, CheckedNumelRejectsNegativeSizes) {
  EXPECT_TG_THROW(checked_numel({2, -3}, "ones"), ShapeError, "ones:", "negative size -3", "dim 1",
                  "(2, -3)");
  EXPECT_TG_THROW(checked_numel({-1}, "full"), ShapeError, "full:", "-1", "dim 0", "(-1)");
  // A negative size is reported even when a 0 elsewhere makes the product 0.
  EXPECT_TG_THROW(checked_numel({0, -2}, "op"), ShapeError, "op:", "negative size -2");
  EXPECT_TG_THROW(checked_numel({kMin, 0}, "op"), ShapeError, "op:", "-9223372036854775808");
}

// ---- contiguous_strides

TEST(ShapeTest, ContiguousStridesAreRowMajor) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({5}), (Strides{1}));
  EXPECT_EQ(contiguous_strides({}), Strides{});
  EXPECT_EQ(contiguous_strides({3, 1, 2}), (Strides{2, 2, 1}));
  EXPECT_EQ(contiguous_strides({1, 1}), (Strides{1, 1}));
  EXPECT_EQ(contiguous_strides({2, 2, 2, 2, 2, 2, 2, 2, 2, 2}),
            (Strides{512, 256, 128, 64, 32, 16, 8, 4, 2, 1}));
}

TEST(ShapeTest, ContiguousStridesTreatZeroSizesAsOne) {
  // As in PyTorch: torch.empty(2, 0, 4).stride() == (4, 4, 1).
  EXPECT_EQ(contiguous_strides({2, 0, 4}), (Strides{4, 4, 1}));
  EXPECT_EQ(contiguous_strides({0, 3}), (Strides{3, 1}));
  EXPECT_EQ(contiguous_strides({3, 0}), (Strides{1, 1}));
  EXPECT_EQ(contiguous_strides({0}), (Strides{1}));
  EXPECT_EQ(contiguous_strides({0, 0, 5}), (Strides{5, 5, 1}));
}

// ---- is_dense

TEST(ShapeTest, IsDenseAcceptsContiguousAndPermutedLayouts) {
  EXPECT_TRUE(is_dense({2, 3}, {3, 1}));                // contiguous
  EXPECT_TRUE(is_dense({3, 2}, {1, 3}));                // its transpose
  EXPECT_TRUE(is_dense({2, 4, 3, 8}, {96, 8, 32, 1}));  // (B, T, H, D) seen as (B, H, T, D)
  EXPECT_TRUE(is_dense({2, 1, 3}, {3, 99, 1}));         // a size-1 dim's stride is never used
  EXPECT_TRUE(is_dense({}, {}));                        // a scalar
  EXPECT_TRUE(is_dense({0, 3}, {7, 2}));                // no elements
}

TEST(ShapeTest, IsDenseRejectsGapsAndOverlaps) {
  EXPECT_FALSE(is_dense({2, 3}, {4, 1}));  // a narrowed row: a gap after each row
  EXPECT_FALSE(is_dense({3}, {2}));        // every other element
  EXPECT_FALSE(is_dense({2, 3}, {0, 1}));  // expanded: both rows are one
  EXPECT_FALSE(is_dense({2, 2}, {1, 1}));  // overlapping windows
  EXPECT_FALSE(is_dense({2, 3}, {3, 2}));  // steps past the end of the block
}

TEST(ShapeTest, ContiguousStridesOverflowIsAShapeError) {
  // numel is 0, but the strides of the later dims still have to be representable.
  EXPECT_EQ(contiguous_strides({0, int64_t{1} << 61, 2}), (Strides{int64_t{1} << 62, 2, 1}));
  EXPECT_TG_THROW(contiguous_strides({0, int64_t{1} << 62, 2}), ShapeError, "contiguous_strides",
                  "(0, 4611686018427387904, 2)", "overflow");
  EXPECT_TG_THROW(contiguous_strides({0, int64_t{1} << 32, int64_t{1} << 32}), ShapeError,
                  "contiguous_strides", "(0, 4294967296, 4294967296)");
}

TEST(ShapeTest, EmptyFactoryReportsStrideOverflowInsteadOfCrashing) {
  EXPECT_TG_THROW(empty({0, int64_t{1} << 32, int64_t{1} << 32}), ShapeError,
                  "(0, 4294967296, 4294967296)");
}

// ---- wrap_dim

TEST(ShapeTest, WrapDimMapsNegativeDimsFromTheEnd) {
  EXPECT_EQ(wrap_dim(0, 3, "op"), 0u);
  EXPECT_EQ(wrap_dim(2, 3, "op"), 2u);
  EXPECT_EQ(wrap_dim(-1, 3, "op"), 2u);
  EXPECT_EQ(wrap_dim(-2, 3, "op"), 1u);
  EXPECT_EQ(wrap_dim(-3, 3, "op"), 0u);
  EXPECT_EQ(wrap_dim(-1, 1, "op"), 0u);
  EXPECT_EQ(wrap_dim(-10, 10, "op"), 0u);
  EXPECT_EQ(wrap_dim(9, 10, "op"), 9u);
}

TEST(ShapeTest, WrapDimRejectsDimsOutOfRange) {
  EXPECT_TG_THROW(wrap_dim(3, 3, "softmax"), IndexError, "softmax:", "dim 3", "rank 3", "-3 to 2");
  EXPECT_TG_THROW(wrap_dim(-4, 3, "sum"), IndexError, "sum:", "dim -4", "rank 3", "-3 to 2");
  EXPECT_TG_THROW(wrap_dim(1, 1, "mean"), IndexError, "mean:", "dim 1", "rank 1", "-1 to 0");
}

TEST(ShapeTest, WrapDimOnRankZeroAcceptsZeroAndMinusOne) {
  // As in PyTorch, a 0-d tensor accepts dim 0 and dim -1, both meaning "the tensor itself".
  EXPECT_EQ(wrap_dim(0, 0, "op"), 0u);
  EXPECT_EQ(wrap_dim(-1, 0, "op"), 0u);
  EXPECT_TG_THROW(wrap_dim(1, 0, "op"), IndexError, "op:", "dim 1", "rank 0", "-1 to 0");
  EXPECT_TG_THROW(wrap_dim(-2, 0, "op"), IndexError, "op:", "dim -2", "rank 0");
}

TEST(ShapeTest, WrapDimHandlesExtremeValuesWithoutOverflow) {
  EXPECT_TG_THROW(wrap_dim(kMin, 4, "op"), IndexError, "op:", "-9223372036854775808");
  EXPECT_TG_THROW(wrap_dim(kMax, 4, "op"), IndexError, "op:", "9223372036854775807");
  EXPECT_TG_THROW(wrap_dim(kMin, 0, "op"), IndexError, "op:", "rank 0");
}

// ---- formatting

TEST(ShapeTest, FormatsLikeATuple) {
  EXPECT_EQ(fmt::format("{}", Shape{2, 3}), "(2, 3)");
  EXPECT_EQ(fmt::format("{}", Shape{}), "()");
  EXPECT_EQ(fmt::format("{}", Shape{7}), "(7)");
  EXPECT_EQ(fmt::format("{}", Shape{-1, 0, 4}), "(-1, 0, 4)");
  EXPECT_EQ(fmt::format("{}", iota(10)), "(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)");
  EXPECT_EQ(fmt::format("shape {} vs {}", Shape{1}, Strides{}), "shape (1) vs ()");
}

}  // namespace
}  // namespace tg
