// tests/core/broadcast_test.cpp — broadcast_shapes, and the two places a broadcast is
// carried out without copying: Tensor::copy_ from a smaller source and Tensor::expand.
#include <random>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

// broadcast_shapes in both argument orders; the result must not depend on the order.
Shape broadcast_both_ways(const Shape& a, const Shape& b) {
  const Shape ab = broadcast_shapes(a, b);
  const Shape ba = broadcast_shapes(b, a);
  EXPECT_EQ(ab, ba) << fmt::format("{} and {}", a, b);
  return ab;
}

TEST(BroadcastTest, NumPyDocumentationExamples) {
  // The examples of numpy.org/doc/stable/user/basics.broadcasting.html.
  EXPECT_EQ(broadcast_both_ways({8, 1, 6, 1}, {7, 1, 5}), (Shape{8, 7, 6, 5}));
  EXPECT_EQ(broadcast_both_ways({256, 256, 3}, {3}), (Shape{256, 256, 3}));
  EXPECT_EQ(broadcast_both_ways({5, 4}, {1}), (Shape{5, 4}));
  EXPECT_EQ(broadcast_both_ways({5, 4}, {4}), (Shape{5, 4}));
  EXPECT_EQ(broadcast_both_ways({15, 3, 5}, {15, 1, 5}), (Shape{15, 3, 5}));
  EXPECT_EQ(broadcast_both_ways({15, 3, 5}, {3, 5}), (Shape{15, 3, 5}));
  EXPECT_EQ(broadcast_both_ways({15, 3, 5}, {3, 1}), (Shape{15, 3, 5}));
  EXPECT_EQ(broadcast_both_ways({4, 1}, {3}), (Shape{4, 3}));
}

TEST(BroadcastTest, EqualShapesAreUnchanged) {
  EXPECT_EQ(broadcast_both_ways({2, 3}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_both_ways({1, 1}, {1, 1}), (Shape{1, 1}));
}

TEST(BroadcastTest, ScalarsBroadcastToAnything) {
  EXPECT_EQ(broadcast_both_ways({}, {}), Shape{});
  EXPECT_EQ(broadcast_both_ways({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_both_ways({}, {1}), (Shape{1}));
  EXPECT_EQ(broadcast_both_ways({}, {0}), (Shape{0}));
  EXPECT_EQ(broadcast_both_ways({}, {4, 0, 1}), (Shape{4, 0, 1}));
}

TEST(BroadcastTest, MissingLeadingDimsCountAsOne) {
  EXPECT_EQ(broadcast_both_ways({3}, {2, 1, 1}), (Shape{2, 1, 3}));
  EXPECT_EQ(broadcast_both_ways({1}, {1, 1, 1}), (Shape{1, 1, 1}));
  EXPECT_EQ(broadcast_both_ways({2, 1}, {5, 1, 4}), (Shape{5, 2, 4}));
}

TEST(BroadcastTest, ZeroSizeDimsBroadcastOnlyAgainstOne) {
  // A size-0 dim stretches a size-1 dim to 0 (not the other way round), like PyTorch.
  EXPECT_EQ(broadcast_both_ways({0}, {1}), (Shape{0}));
  EXPECT_EQ(broadcast_both_ways({0}, {0}), (Shape{0}));
  EXPECT_EQ(broadcast_both_ways({2, 0}, {1}), (Shape{2, 0}));
  EXPECT_EQ(broadcast_both_ways({0, 1}, {1, 3}), (Shape{0, 3}));
  EXPECT_EQ(broadcast_both_ways({3, 1, 0}, {4, 1}), (Shape{3, 4, 0}));
  EXPECT_TG_THROW(broadcast_shapes({0}, {3}), ShapeError, "broadcast_shapes", "(0)", "(3)",
                  "0 vs 3");
  EXPECT_TG_THROW(broadcast_shapes({3}, {0}), ShapeError, "(3)", "(0)", "3 vs 0");
  EXPECT_TG_THROW(broadcast_shapes({2, 0}, {2, 2}), ShapeError, "(2, 0)", "(2, 2)");
}

TEST(BroadcastTest, ResultsAboveTheInlineRank) {
  // Shapes of rank > 8 live on the heap; broadcasting must work all the same.
  const Shape a{2, 1, 1, 1, 1, 1, 1, 1, 1, 3};
  const Shape b{4, 1};
  const Shape out = broadcast_both_ways(a, b);
  EXPECT_EQ(out, (Shape{2, 1, 1, 1, 1, 1, 1, 1, 4, 3}));
  EXPECT_TRUE(out.on_heap());
}

TEST(BroadcastTest, ErrorNamesBothShapesAndTheClashingDim) {
  EXPECT_TG_THROW(broadcast_shapes({2, 3}, {4}), ShapeError, "broadcast_shapes:", "(2, 3)", "(4)",
                  "dim -1", "3 vs 4");
  // The clash is in the second dim from the end; the last one is fine (1 vs 3).
  EXPECT_TG_THROW(broadcast_shapes({2, 1}, {8, 4, 3}), ShapeError, "(2, 1)", "(8, 4, 3)", "dim -2",
                  "2 vs 4");
  EXPECT_TG_THROW(broadcast_shapes({8, 4, 3}, {2, 1}), ShapeError, "(8, 4, 3)", "(2, 1)", "dim -2",
                  "4 vs 2");
  // A clash in a leading dim, after several dims that agree.
  EXPECT_TG_THROW(broadcast_shapes({5, 1, 6, 7}, {6, 1, 6, 1}), ShapeError, "dim -4", "5 vs 6");
}

TEST(BroadcastTest, ErrorNamesTheCallingOp) {
  EXPECT_TG_THROW(broadcast_shapes({3}, {4}, "add"), ShapeError, "add:", "(3)", "(4)");
  EXPECT_TG_THROW(broadcast_shapes({2, 5}, {3, 5}, "mul"), ShapeError, "mul:", "(2, 5)", "(3, 5)",
                  "dim -2");
}

TEST(BroadcastTest, RandomShapesMatchTheRuleAndAreSymmetric) {
  // Compare against the rule written out directly, for many random shape pairs.
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> rank_dist(0, 5);
  std::uniform_int_distribution<int64_t> size_dist(0, 3);
  int broadcastable = 0, clashing = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Shape a, b;
    const int ra = rank_dist(rng), rb = rank_dist(rng);
    for (int i = 0; i < ra; ++i) a.push_back(size_dist(rng));
    for (int i = 0; i < rb; ++i) b.push_back(size_dist(rng));

    const int rank = std::max(ra, rb);
    Shape expected(static_cast<size_t>(rank), 1);
    bool ok = true;
    for (int i = 0; i < rank; ++i) {  // i counts from the end
      const int64_t da = i < ra ? a[static_cast<size_t>(ra - 1 - i)] : 1;
      const int64_t db = i < rb ? b[static_cast<size_t>(rb - 1 - i)] : 1;
      if (da != db && da != 1 && db != 1) ok = false;
      expected[static_cast<size_t>(rank - 1 - i)] = da == 1 ? db : da;
    }
    const std::string what = fmt::format("{} and {}", a, b);
    if (ok) {
      ++broadcastable;
      EXPECT_EQ(broadcast_shapes(a, b), expected) << what;
      EXPECT_EQ(broadcast_shapes(b, a), expected) << what;
    } else {
      ++clashing;
      EXPECT_THROW(broadcast_shapes(a, b), ShapeError) << what;
      EXPECT_THROW(broadcast_shapes(b, a), ShapeError) << what;
    }
  }
  // Both branches were exercised many times.
  EXPECT_GT(broadcastable, 200);
  EXPECT_GT(clashing, 200);
}

// ---- copy_ broadcasts its source

TEST(BroadcastTest, CopyBroadcastsARowIntoEveryRow) {
  Tensor dst = zeros({2, 3});
  const Tensor row = tensor({1.f, 2.f, 3.f});
  Tensor& result = dst.copy_(row);
  EXPECT_EQ(result.impl(), dst.impl());  // returns *this
  EXPECT_EQ(dst.shape(), (Shape{2, 3}));
  EXPECT_EQ(dst.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{1, 2, 3}));  // source untouched
}

TEST(BroadcastTest, CopyBroadcastsAColumnAndAScalar) {
  Tensor dst = zeros({2, 3});
  dst.copy_(tensor({10.f, 20.f}, {2, 1}));
  EXPECT_EQ(dst.to_vector<float>(), (std::vector<float>{10, 10, 10, 20, 20, 20}));
  dst.copy_(scalar_tensor(-4));
  EXPECT_EQ(dst.to_vector<float>(), std::vector<float>(6, -4.f));
  // A (1, 3) source with a leading size-1 dim also broadcasts over the rows.
  Tensor big = zeros({2, 2, 3});
  big.copy_(tensor({1.f, 2.f, 3.f}, {1, 3}));
  EXPECT_EQ(big.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
}

TEST(BroadcastTest, CopyBroadcastsIntoATransposedView) {
  // x.t() is (3, 2); copying the row (5, 6) into it sets x's rows to 5 and 6.
  Tensor x = zeros({2, 3});
  x.t().copy_(tensor({5.f, 6.f}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{5, 5, 5, 6, 6, 6}));
}

TEST(BroadcastTest, CopyConvertsTheDTypeWhileBroadcasting) {
  Tensor dst = zeros({2, 2}, kFloat64);
  dst.copy_(tensor({7, -8}, {2}));  // int64 row
  EXPECT_EQ(dst.to_vector<double>(), (std::vector<double>{7, -8, 7, -8}));
}

TEST(BroadcastTest, CopyNeverBroadcastsTheDestination) {
  // The destination keeps its shape: a (2, 3) source does not fit into a (3,) tensor,
  // although the two shapes broadcast together.
  Tensor row = zeros({3});
  EXPECT_TG_THROW(row.copy_(ones({2, 3})), ShapeError, "copy_", "(2, 3)", "(3)");
  Tensor one = zeros({1, 3});
  EXPECT_TG_THROW(one.copy_(ones({4, 3})), ShapeError, "copy_", "(4, 3)", "(1, 3)");
  EXPECT_EQ(row.to_vector<float>(), std::vector<float>(3, 0.f));  // nothing was written
}

TEST(BroadcastTest, CopyFromANonBroadcastableSourceNamesBothShapes) {
  Tensor dst = zeros({2, 3});
  EXPECT_TG_THROW(dst.copy_(ones({4})), ShapeError, "copy_", "(2, 3)", "(4)", "3 vs 4");
  EXPECT_TG_THROW(dst.copy_(ones({3, 1})), ShapeError, "copy_", "(2, 3)", "(3, 1)", "2 vs 3");
  EXPECT_EQ(dst.to_vector<float>(), std::vector<float>(6, 0.f));
}

TEST(BroadcastTest, CopyIntoZeroSizeTensorFromARow) {
  Tensor dst = zeros({0, 3});
  dst.copy_(tensor({1.f, 2.f, 3.f}));
  EXPECT_EQ(dst.shape(), (Shape{0, 3}));
  EXPECT_TRUE(dst.to_vector<float>().empty());
}

// ---- expand: the broadcast view itself

TEST(BroadcastTest, ExpandColumnRepeatsEachRowWithStrideZero) {
  const Tensor col = tensor({1.f, 2.f, 3.f}, {3, 1});
  const Tensor e = col.expand({3, 4});
  EXPECT_EQ(e.shape(), (Shape{3, 4}));
  EXPECT_EQ(e.strides(), (Strides{1, 0}));
  EXPECT_EQ(e.storage(), col.storage());  // no copy
  EXPECT_EQ(e.storage_offset(), 0);
  EXPECT_FALSE(e.is_contiguous());
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
  EXPECT_EQ(e.at<float>({2, 3}), 3.f);
}

TEST(BroadcastTest, ExpandColumnToTheBroadcastShape) {
  // The (3, 1) column against a (2, 1, 4) tensor: broadcast shape (2, 3, 4).
  const Tensor col = tensor({1.f, 2.f, 3.f}, {3, 1});
  const Shape target = broadcast_shapes(col.shape(), {2, 1, 4});
  ASSERT_EQ(target, (Shape{2, 3, 4}));
  const Tensor e = col.expand(target);
  EXPECT_EQ(e.strides(), (Strides{0, 1, 0}));
  std::vector<float> expected;
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) expected.push_back(static_cast<float>(r + 1));
    }
  }
  EXPECT_EQ(e.to_vector<float>(), expected);
}

TEST(BroadcastTest, ExpandSeesLaterWritesToTheBase) {
  Tensor col = tensor({1.f, 2.f, 3.f}, {3, 1});
  const Tensor e = col.expand({3, 2});
  col.narrow(0, 1, 1).fill_(9);
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{1, 1, 9, 9, 3, 3}));
}

}  // namespace
}  // namespace tg
