// tests/ops/embedding_test.cpp — embedding: values, gradients (against finite differences and
// against the same lookup composed from index_select), padding_idx, dtypes, errors.
#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using ::testing::DoubleNear;
using testing::grad_of;
using testing::leaf;
using ::testing::Pointwise;

/// int64 ids from a list.
Tensor ids_of(std::initializer_list<int> values, const Shape& shape) {
  return tensor(values, shape);
}

/// embedding composed from primitives: index_select on the flattened ids, then reshape.
Tensor composed_embedding(const Tensor& ids, const Tensor& table) {
  Shape out_shape = ids.shape();
  out_shape.push_back(table.size(1));
  return index_select(table, 0, ids.reshape({-1})).reshape(out_shape);
}

// ---------------------------------------------------------------- forward values
TEST(EmbeddingTest, HandComputedValues) {
  const Tensor table = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {3, 2});
  const Tensor y = embedding(ids_of({2, 0, 1, 2}, {2, 2}), table);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(y.dtype(), kFloat64);
  EXPECT_EQ(as_doubles(y), (std::vector<double>{5, 6, 1, 2, 3, 4, 5, 6}));
}

TEST(EmbeddingTest, ZeroDimIdGivesOneRow) {
  const Tensor table = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  const Tensor y = embedding(ids_of({1}, {}), table);
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(as_doubles(y), (std::vector<double>{4, 5, 6}));
}

TEST(EmbeddingTest, EmptyIdsGiveAnEmptyOutput) {
  const Tensor y = embedding(zeros({0}, kInt64), zeros({4, 3}));
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

TEST(EmbeddingTest, NonContiguousIdsAndTable) {
  // ids (2, 3) seen transposed: (3, 2) = [[0, 3], [1, 4], [2, 0]]; table rows strided.
  const Tensor ids = ids_of({0, 1, 2, 3, 4, 0}, {2, 3}).t();
  ASSERT_FALSE(ids.is_contiguous());
  const Tensor table = arange(10.0, kFloat64).reshape({2, 5}).t();  // (5, 2): row v = (v, v+5)
  ASSERT_FALSE(table.is_contiguous());
  const Tensor y = embedding(ids, table);
  EXPECT_EQ(y.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{0, 5, 3, 8, 1, 6, 4, 9, 2, 7, 0, 5}));
}

TEST(EmbeddingTest, HalfForwardIsAnExactCopy) {
  Generator gen(1);
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor table = randn({7, 5}, kFloat32, gen).to(dt);
    const Tensor ids = ids_of({6, 0, 3, 3}, {4});
    const Tensor y = embedding(ids, table);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(as_doubles(y), as_doubles(index_select(table, 0, ids))) << dtype_name(dt);
  }
}

// ---------------------------------------------------------------- gradients
TEST(EmbeddingTest, BackwardAccumulatesRepeatedIds) {
  const Tensor table = zeros({4, 2}, kFloat64).requires_grad_();
  const Tensor ids = ids_of({1, 3, 1, 1}, {4});
  const Tensor dout = tensor({1.0, 2.0, 10.0, 20.0, 100.0, 200.0, 1000.0, 2000.0}, {4, 2});
  const Tensor dtable = grad({embedding(ids, table)}, {table}, {dout})[0];
  // Row 1 was looked up at positions 0, 2 and 3: the sum of their gradient rows; row 3 at
  // position 1; rows 0 and 2 never: zero.
  EXPECT_EQ(as_doubles(dtable), (std::vector<double>{0, 0, 1101, 2202, 0, 0, 10, 20}));
}

TEST(EmbeddingTest, GradcheckShapes) {
  Generator gen(2);
  auto with = [](const Tensor& ids) {
    return [ids](const std::vector<Tensor>& in) { return embedding(ids, in[0]); };
  };
  EXPECT_GRADCHECK(with(ids_of({4, 0, 2, 4}, {4})), {leaf({5, 3}, gen)});           // repeats
  EXPECT_GRADCHECK(with(ids_of({0, 1, 1, 6, 3, 0}, {2, 3})), {leaf({7, 1}, gen)});  // D = 1
  EXPECT_GRADCHECK(with(ids_of({2}, {})), {leaf({3, 4}, gen)});                     // 0-d id
  EXPECT_GRADCHECK(with(ids_of({0, 0}, {2, 1})), {leaf({1, 129}, gen)});            // V = 1
  EXPECT_GRADCHECK(with(randint(0, 9, {2, 3, 4}, kInt64, gen)), {leaf({9, 5}, gen)});
}

TEST(EmbeddingTest, GradcheckNonContiguous) {
  Generator gen(3);
  const Tensor ids = ids_of({0, 4, 2, 2, 1, 3}, {3, 2}).t();  // non-contiguous ids too
  auto fn = [ids](const std::vector<Tensor>& in) { return embedding(ids, in[0]); };
  const Tensor tt = randn({3, 5}, kFloat64, gen).t().requires_grad_();  // (5, 3), transposed
  ASSERT_FALSE(tt.is_contiguous());
  EXPECT_GRADCHECK(fn, {tt});
  const Tensor ts = randn({5, 6}, kFloat64, gen).slice(1, 0, 6, 2).requires_grad_();  // (5, 3)
  ASSERT_FALSE(ts.is_contiguous());
  EXPECT_GRADCHECK(fn, {ts});
}

TEST(EmbeddingTest, GradcheckComposedTwin) {
  Generator gen(4);
  const Tensor ids = ids_of({1, 1, 0, 3}, {2, 2});
  auto fn = [ids](const std::vector<Tensor>& in) { return composed_embedding(ids, in[0]); };
  EXPECT_GRADCHECK(fn, {leaf({4, 3}, gen)});
  EXPECT_GRADCHECK(fn, {randn({3, 4}, kFloat64, gen).t().requires_grad_()});
}

TEST(EmbeddingTest, FusedAgreesWithComposed) {
  Generator gen(5);
  struct Case {
    Shape ids_shape;
    int64_t vocab, dim;
    bool transpose_table;
  };
  for (const Case& c : {Case{{7}, 3, 5, false}, Case{{2, 3, 4}, 11, 129, false},
                        Case{{}, 4, 2, false}, Case{{5, 1}, 6, 3, true}}) {
    const Tensor ids = randint(0, c.vocab, c.ids_shape, kInt64, gen);
    const Tensor table = c.transpose_table
                             ? randn({c.dim, c.vocab}, kFloat64, gen).t().requires_grad_()
                             : leaf({c.vocab, c.dim}, gen);
    const Tensor fused = embedding(ids, table), composed = composed_embedding(ids, table);
    EXPECT_EQ(as_doubles(fused), as_doubles(composed));
    const Tensor gout = randn(fused.shape(), kFloat64, gen);
    EXPECT_THAT(as_doubles(grad_of(fused, table, gout)),
                Pointwise(DoubleNear(1e-12), as_doubles(grad_of(composed, table, gout))))
        << fmt::format("ids {} table ({}, {})", c.ids_shape, c.vocab, c.dim);
  }
}

TEST(EmbeddingTest, SavesOnlyTheIds) {
  Generator gen(6);
  const Tensor table = leaf({10, 4}, gen);
  const Tensor y = embedding(ids_of({1, 2, 3}, {3}), table);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "embedding");
  EXPECT_EQ(y.grad_fn()->saved_bytes(), 3u * 8u);  // 3 int64 ids, not the (10, 4) table
}

TEST(EmbeddingTest, Float32Backward) {
  const Tensor table = zeros({3, 2}, kFloat32).requires_grad_();
  const Tensor dout = tensor({0.5f, 1.f, 0.25f, 2.f}, {2, 2});
  const Tensor dtable = grad({embedding(ids_of({2, 2}, {2}), table)}, {table}, {dout})[0];
  EXPECT_EQ(dtable.dtype(), kFloat32);
  EXPECT_EQ(as_doubles(dtable), (std::vector<double>{0, 0, 0, 0, 0.75, 3}));
}

TEST(EmbeddingTest, HalfBackwardAccumulatesInFloat32AndRoundsOnce) {
  // Three gradient rows for the same id: big + 1 + 1. Summed in the half type, big + 1 rounds
  // back to big twice (1 is half the spacing of the numbers near big, a tie to even) and the
  // row would get big; summed in float32 and rounded once, it gets big + 2 (representable).
  for (auto [dt, big] : {std::pair{kFloat16, 2048.0}, std::pair{kBFloat16, 256.0}}) {
    const Tensor table = zeros({2, 1}, dt).requires_grad_();
    const Tensor dout = tensor({big, 1.0, 1.0}, {3, 1}).to(dt);
    const Tensor dtable = grad({embedding(ids_of({0, 0, 0}, {3}), table)}, {table}, {dout})[0];
    EXPECT_EQ(dtable.dtype(), dt);
    EXPECT_EQ(as_doubles(dtable), (std::vector<double>{big + 2, 0})) << dtype_name(dt);
  }
}

// ---------------------------------------------------------------- padding_idx
TEST(EmbeddingTest, PaddingRowIsLookedUpButGetsNoGradient) {
  const Tensor table = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {3, 2}).requires_grad_();
  const Tensor ids = ids_of({0, 1, 0, 2}, {4});
  const Tensor y = embedding(ids, table, 0);
  // Forward: row 0 is returned as it is (PyTorch does not zero it either).
  EXPECT_EQ(as_doubles(y), (std::vector<double>{1, 2, 3, 4, 1, 2, 5, 6}));
  const Tensor dtable = grad_of(y, table, ones({4, 2}, kFloat64));
  EXPECT_EQ(as_doubles(dtable), (std::vector<double>{0, 0, 1, 1, 1, 1}));
}

TEST(EmbeddingTest, NegativePaddingIdxCountsFromTheEnd) {
  const Tensor table = zeros({3, 2}, kFloat64).requires_grad_();
  const Tensor ids = ids_of({2, 1, 2}, {3});
  for (int64_t pad : {-1, 2}) {
    const Tensor dtable = grad_of(embedding(ids, table, pad), table, ones({3, 2}, kFloat64));
    EXPECT_EQ(as_doubles(dtable), (std::vector<double>{0, 0, 1, 1, 0, 0})) << pad;
  }
  // A padding row that no id uses changes nothing.
  const Tensor dtable = grad_of(embedding(ids, table, -3), table, ones({3, 2}, kFloat64));
  EXPECT_EQ(as_doubles(dtable), (std::vector<double>{0, 0, 1, 1, 2, 2}));
}

// The kink convention: embedding is linear in the table and has no kink; its only
// "non-differentiable" choice is padding_idx, pinned above: that row's gradient is exactly 0.

// ---------------------------------------------------------------- a broadcast gradient
TEST(EmbeddingTest, ABroadcastGradientGivesTheSameBitsAsItsCopy) {
  // The backward reads a gradient whose rows are all one row (sum's backward, an expanded
  // row) without copying it out; the sums must equal those of the materialised gradient.
  // Row strides 0 over 1, 2 leading dims and size-1 dims.
  Generator gen(6);
  for (DType dtype : {kFloat32, kFloat64, kBFloat16}) {
    const Tensor table = randn({9, 21}, kFloat32, gen).to(dtype).requires_grad_();
    for (const Shape& ids_shape : {Shape{40}, Shape{5, 8}, Shape{1, 40}}) {
      SCOPED_TRACE(fmt::format("{} ids {}", dtype, ids_shape));
      const Tensor ids = randint(0, 9, ids_shape, kInt64, gen);
      Shape out_shape = ids_shape;
      out_shape.push_back(21);
      const Tensor row = randn({21}, kFloat32, gen).to(dtype);
      const Tensor broadcast = row.expand(out_shape);  // every leading stride 0
      const Tensor copied = broadcast.contiguous();
      const Tensor fast = grad_of(embedding(ids, table, 4), table, broadcast);
      EXPECT_EQ(as_doubles(fast), as_doubles(grad_of(embedding(ids, table, 4), table, copied)));
    }
    // sum's backward: a 0-d gradient expanded to every element
    const Tensor ids = randint(0, 9, {33}, kInt64, gen);
    const Tensor fast = grad({sum(embedding(ids, table))}, {table})[0];
    const Tensor ones_out = ones({33, 21}, dtype);
    EXPECT_EQ(as_doubles(fast), as_doubles(grad_of(embedding(ids, table), table, ones_out)));
  }
}

// ---------------------------------------------------------------- errors
TEST(EmbeddingTest, Errors) {
  const Tensor table = zeros({5, 3});
  EXPECT_TG_THROW(embedding(zeros({2}), table), DTypeError, "embedding", "ids", "int64", "float32",
                  "(2)");
  EXPECT_TG_THROW(embedding(ids_of({0}, {1}), zeros({5, 3}, kInt64)), DTypeError, "embedding",
                  "floating point", "int64", "(5, 3)");
  EXPECT_TG_THROW(embedding(ids_of({0}, {1}), zeros({5})), ShapeError, "embedding", "2-D", "(5)");
  EXPECT_TG_THROW(embedding(ids_of({0}, {1}), zeros({2, 5, 3})), ShapeError, "embedding",
                  "(2, 5, 3)");
  // Bad ids: the id, where it is in ids (a multi-index), and V.
  EXPECT_TG_THROW(embedding(ids_of({0, 1, 5, 2}, {2, 2}), table), IndexError, "embedding", "id 5",
                  "position (1, 0)", "V = 5", "[0, 5)");
  EXPECT_TG_THROW(embedding(ids_of({4, -1}, {2}), table), IndexError, "embedding", "id -1",
                  "position (1)", "V = 5");
  EXPECT_TG_THROW(embedding(ids_of({7}, {}), table), IndexError, "embedding", "id 7", "position ()",
                  "V = 5");
  EXPECT_TG_THROW(embedding(ids_of({0, 1, 2, 9}, {2, 2}).t(), table), IndexError, "embedding",
                  "id 9", "position (1, 1)");
  EXPECT_TG_THROW(embedding(ids_of({0}, {1}), zeros({0, 3})), IndexError, "embedding", "id 0",
                  "V = 0");
  EXPECT_TG_THROW(embedding(ids_of({0}, {1}), table, 5), IndexError, "embedding", "padding_idx 5",
                  "V = 5");
  EXPECT_TG_THROW(embedding(ids_of({0}, {1}), table, -6), IndexError, "embedding", "padding_idx -6",
                  "[-5, 5)");
}

}  // namespace
}  // namespace tg
