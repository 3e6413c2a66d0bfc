// tests/ops/join_test.cpp — cat, stack, split, chunk: values, gradients, views, errors.
#include <cmath>

#include "test_util.h"

namespace {

using tg::Shape;
using tg::Tensor;
using V = std::vector<double>;

V values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }
Tensor f64(V v, const Shape& shape) { return tg::tensor(v, shape); }
// A float64 leaf that requires grad and is NOT contiguous: the transpose of a (cols, rows).
Tensor transposed_leaf(int64_t rows, int64_t cols, tg::Generator& gen) {
  return tg::randn({cols, rows}, tg::kFloat64, gen).t().requires_grad_();
}
using tg::testing::grad_of;
using tg::testing::leaf;
using tg::testing::swapped_leaf;
std::vector<Shape> shapes_of(const std::vector<Tensor>& ts) {
  std::vector<Shape> out;
  for (const Tensor& t : ts) out.push_back(t.shape());
  return out;
}

// ---------------------------------------------------------------- cat
TEST(CatTest, JoinsAlongDimZero) {
  Tensor y = tg::cat({f64({1, 2, 3, 4}, {2, 2}), f64({5, 6}, {1, 2})});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y), (V{1, 2, 3, 4, 5, 6}));
}

TEST(CatTest, JoinsAlongTheLastDimWithANegativeDim) {
  // [[1], [2]] next to [[3, 4], [5, 6]]
  Tensor y = tg::cat({f64({1, 2}, {2, 1}), f64({3, 4, 5, 6}, {2, 2})}, -1);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (V{1, 3, 4, 2, 5, 6}));
}

TEST(CatTest, JoinsAMiddleDimOfThreeInputs) {
  Tensor a = f64({1, 2, 3, 4}, {2, 1, 2});
  Tensor b = f64({5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 2});
  Tensor c = f64({13, 14, 15, 16}, {2, 1, 2});
  Tensor y = tg::cat({a, b, c}, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 4, 2}));
  EXPECT_EQ(values(y), (V{1, 2, 5, 6, 7, 8, 13, 14, 3, 4, 9, 10, 11, 12, 15, 16}));
}

TEST(CatTest, ReadsNonContiguousInputs) {
  Tensor a = f64({1, 2, 3, 4, 5, 6}, {3, 2}).t();  // [[1, 3, 5], [2, 4, 6]]
  ASSERT_FALSE(a.is_contiguous());
  EXPECT_EQ(values(tg::cat({a, a}, 0)), (V{1, 3, 5, 2, 4, 6, 1, 3, 5, 2, 4, 6}));
  EXPECT_EQ(values(tg::cat({a, a.slice(1, 0, 3, 2)}, 1)), (V{1, 3, 5, 1, 5, 2, 4, 6, 2, 6}));
}

TEST(CatTest, KeepsEveryDType) {
  Tensor i = tg::cat({tg::tensor({1, 2}, {2}), tg::tensor({-3}, {1})});
  EXPECT_EQ(i.dtype(), tg::kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, -3}));
  Tensor b = tg::cat({tg::tensor({true, false}, {2}), tg::tensor({true}, {1})});
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  for (tg::DType dt : {tg::kFloat32, tg::kFloat16, tg::kBFloat16}) {
    Tensor y = tg::cat({f64({0.5, -1.5}, {1, 2}).to(dt), f64({2.25, 3}, {1, 2}).to(dt)}, 1);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(values(y), (V{0.5, -1.5, 2.25, 3}));
  }
}

TEST(CatTest, HandlesEmptyPieces) {
  Tensor a = f64({1, 2, 3, 4}, {2, 2});
  Tensor y = tg::cat({tg::zeros({2, 0}, tg::kFloat64), a, tg::zeros({2, 0}, tg::kFloat64)}, 1);
  EXPECT_EQ(values(y), (V{1, 2, 3, 4}));
  EXPECT_EQ(tg::cat({tg::zeros({0, 3}), tg::zeros({0, 3})}).shape(), (Shape{0, 3}));
}

TEST(CatTest, ReturnsANewTensorEvenForOneInput) {
  Tensor a = f64({1, 2}, {2});
  Tensor y = tg::cat({a});
  EXPECT_NE(y.storage(), a.storage());
  EXPECT_EQ(values(y), (V{1, 2}));
}

TEST(CatTest, DoesNotSkipOneDimEmptyTensorsLikePyTorchsLegacyRule) {
  // PyTorch lets a (0) tensor join anything; tapegrad asks for equal ranks.
  EXPECT_TG_THROW(tg::cat({tg::zeros({0}), tg::zeros({2, 2})}), ShapeError, "cat", "(0)", "(2, 2)",
                  "ranks differ");
}

TEST(CatTest, BackwardNarrowsTheGradientIntoPieces) {
  Tensor a = f64({1, 2, 3, 4}, {2, 2}).requires_grad_();
  Tensor b = f64({5, 6}, {2, 1}).requires_grad_();
  tg::cat({a, b}, 1).backward(f64({10, 20, 30, 40, 50, 60}, {2, 3}));
  EXPECT_EQ(values(a.grad()), (V{10, 20, 40, 50}));
  EXPECT_EQ(values(b.grad()), (V{30, 60}));
}

TEST(CatTest, TheSameInputTwiceGetsBothGradients) {
  Tensor x = f64({1, 2}, {2}).requires_grad_();
  tg::cat({x, x}).backward(f64({1, 2, 30, 40}, {4}));
  EXPECT_EQ(values(x.grad()), (V{31, 42}));
}

TEST(CatTest, OnlyInputsThatRequireGradGetOne) {
  Tensor a = f64({1, 2}, {2}).requires_grad_();
  Tensor b = f64({3}, {1});
  Tensor y = tg::cat({b, a});
  EXPECT_TRUE(y.requires_grad());
  y.backward(f64({7, 8, 9}, {3}));
  EXPECT_EQ(values(a.grad()), (V{8, 9}));
  EXPECT_FALSE(b.grad().defined());
  EXPECT_FALSE(tg::cat({b, b}).requires_grad());
}

TEST(CatTest, Gradcheck) {
  tg::Generator gen(11);
  auto cat_along = [](int64_t dim) {
    return [dim](const std::vector<Tensor>& in) { return tg::cat(in, dim); };
  };
  EXPECT_GRADCHECK(cat_along(0), {leaf({2, 3}, gen), leaf({1, 3}, gen), leaf({4, 3}, gen)});
  // non-contiguous inputs, a size-1 dim, and a middle dim
  EXPECT_GRADCHECK(cat_along(1), {leaf({3, 1, 2}, gen), swapped_leaf({2, 3, 3}, 0, 2, gen),
                                  leaf({3, 2, 2}, gen)});
  EXPECT_GRADCHECK(cat_along(-1), {transposed_leaf(2, 3, gen), transposed_leaf(2, 1, gen)});
}

TEST(CatTest, ErrorsNameTheProblem) {
  Tensor a = tg::zeros({2, 3});
  EXPECT_TG_THROW(tg::cat({}), ValueError, "cat", "non-empty");
  EXPECT_TG_THROW(tg::cat({a, tg::zeros({2, 3}, tg::kFloat64)}), DTypeError, "cat", "tensor 1",
                  "float64", "float32");
  EXPECT_TG_THROW(tg::cat({a, tg::zeros({3})}), ShapeError, "cat", "tensor 1", "(3)", "(2, 3)");
  EXPECT_TG_THROW(tg::cat({a, tg::zeros({2, 4})}), ShapeError, "cat", "(2, 4)", "(2, 3)",
                  "except in dim 0", "dim 1: 4 vs 3");
  EXPECT_TG_THROW(tg::cat({a, tg::zeros({3, 3})}, 1), ShapeError, "cat", "(3, 3)", "dim 0: 3 vs 2");
  EXPECT_TG_THROW(tg::cat({tg::scalar_tensor(1), tg::scalar_tensor(2)}), ShapeError, "cat",
                  "tensor 0", "0-d");
  EXPECT_TG_THROW(tg::cat({a, a}, 2), IndexError, "cat", "dim 2", "rank 2");
  EXPECT_TG_THROW(tg::cat({a, Tensor()}), MisuseError, "cat", "tensor 1", "undefined");
  Tensor huge = tg::zeros({1}).expand({int64_t{1} << 62});  // stride 0: no memory behind it
  EXPECT_TG_THROW(tg::cat({huge, huge, huge}), ShapeError, "cat", "int64");
}

// ---------------------------------------------------------------- stack
TEST(StackTest, AddsANewDimAtAnyPosition) {
  Tensor a = f64({1, 2}, {2}), b = f64({3, 4}, {2}), c = f64({5, 6}, {2});
  Tensor y0 = tg::stack({a, b, c});
  EXPECT_EQ(y0.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y0), (V{1, 2, 3, 4, 5, 6}));
  Tensor y1 = tg::stack({a, b, c}, 1);
  EXPECT_EQ(y1.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y1), (V{1, 3, 5, 2, 4, 6}));
  EXPECT_EQ(values(tg::stack({a, b, c}, -1)), values(y1));  // -1 is after the last dim
  EXPECT_EQ(values(tg::stack({a, b, c}, -2)), values(y0));
}

TEST(StackTest, StacksScalarsAndNonContiguousTensors) {
  Tensor s = tg::stack({tg::scalar_tensor(1.5), tg::scalar_tensor(-2)});
  EXPECT_EQ(s.shape(), (Shape{2}));
  EXPECT_EQ(values(s), (V{1.5, -2}));
  Tensor t = f64({1, 2, 3, 4}, {2, 2}).t();  // [[1, 3], [2, 4]]
  EXPECT_EQ(values(tg::stack({t, t}, 2)), (V{1, 1, 3, 3, 2, 2, 4, 4}));
}

TEST(StackTest, KeepsEveryDType) {
  EXPECT_EQ(tg::stack({tg::tensor({1}, {1}), tg::tensor({2}, {1})}).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 2}));
  for (tg::DType dt : {tg::kFloat32, tg::kFloat16, tg::kBFloat16}) {
    Tensor y = tg::stack({f64({0.25, 4}, {2}).to(dt), f64({-8, 1}, {2}).to(dt)}, 1);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(values(y), (V{0.25, -8, 4, 1}));
  }
}

TEST(StackTest, BackwardSelectsEachInputsSlice) {
  Tensor a = f64({1, 2}, {2}).requires_grad_();
  Tensor b = f64({3, 4}, {2}).requires_grad_();
  tg::stack({a, b}, 1).backward(f64({10, 20, 30, 40}, {2, 2}));
  EXPECT_EQ(values(a.grad()), (V{10, 30}));
  EXPECT_EQ(values(b.grad()), (V{20, 40}));
}

TEST(StackTest, Gradcheck) {
  tg::Generator gen(12);
  auto stack_along = [](int64_t dim) {
    return [dim](const std::vector<Tensor>& in) { return tg::stack(in, dim); };
  };
  EXPECT_GRADCHECK(stack_along(0), {leaf({3}, gen), leaf({3}, gen)});
  EXPECT_GRADCHECK(stack_along(1),
                   {transposed_leaf(2, 3, gen), leaf({2, 3}, gen), transposed_leaf(2, 3, gen)});
  EXPECT_GRADCHECK(stack_along(-1), {leaf({1, 2, 1}, gen), leaf({1, 2, 1}, gen)});
}

TEST(StackTest, ErrorsNameTheProblem) {
  Tensor a = tg::zeros({2, 3});
  EXPECT_TG_THROW(tg::stack({}), ValueError, "stack", "non-empty");
  EXPECT_TG_THROW(tg::stack({a, tg::zeros({3, 2})}), ShapeError, "stack", "tensor 1", "(3, 2)",
                  "(2, 3)");
  EXPECT_TG_THROW(tg::stack({a, a.to(tg::kInt64)}), DTypeError, "stack", "int64", "float32");
  EXPECT_TG_THROW(tg::stack({a, a}, 3), IndexError, "stack", "dim 3", "rank 2", "-3 to 2");
  EXPECT_TG_THROW(tg::stack({a, a}, -4), IndexError, "stack", "dim -4");
}

// ---------------------------------------------------------------- split and chunk
TEST(SplitTest, CutsPiecesOfOneSizeWithASmallerLastOne) {
  Tensor x = f64({0, 1, 2, 3, 4}, {5});
  std::vector<Tensor> p = tg::split(x, 2);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(values(p[0]), (V{0, 1}));
  EXPECT_EQ(values(p[1]), (V{2, 3}));
  EXPECT_EQ(values(p[2]), (V{4}));
  EXPECT_EQ(tg::split(x, 5).size(), 1u);
  EXPECT_EQ(tg::split(x, 7).size(), 1u);  // a size beyond n gives one piece
}

TEST(SplitTest, CutsGivenSizesAlongAnyDim) {
  Tensor x = f64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 5});
  std::vector<Tensor> p = tg::split(x, std::vector<int64_t>{1, 0, 4}, -1);
  EXPECT_EQ(shapes_of(p), (std::vector<Shape>{{2, 1}, {2, 0}, {2, 4}}));
  EXPECT_EQ(values(p[0]), (V{0, 5}));
  EXPECT_EQ(values(p[2]), (V{1, 2, 3, 4, 6, 7, 8, 9}));
}

TEST(SplitTest, ABraceListOfOneSizeMeansSizesLikePyTorch) {
  Tensor x = f64({1, 2, 3}, {3});
  EXPECT_EQ(tg::split(x, {3}).size(), 1u);  // sizes {3}, not split_size 3 ...
  EXPECT_TG_THROW(tg::split(x, {2}), ValueError, "split", "sum to 2");  // ... so {2} is wrong
  EXPECT_EQ(tg::split(x, 2).size(), 2u);                                // split_size 2
}

TEST(SplitTest, PiecesAreViewsOfTheInput) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  std::vector<Tensor> p = tg::split(x, 2, 1);
  EXPECT_EQ(p[0].storage(), x.storage());
  EXPECT_NE(p[0].impl(), p[1].impl());
  EXPECT_FALSE(p[0].is_contiguous());
  p[1].fill_(0);  // x does not require grad, so writing through a piece is allowed
  EXPECT_EQ(values(x), (V{1, 2, 0, 4, 5, 0}));
}

TEST(SplitTest, EachPieceIsItsOwnOutputOfOneNode) {
  Tensor x = f64({1, 2, 3, 4}, {4}).requires_grad_();
  std::vector<Tensor> p = tg::split(x, 1);
  ASSERT_EQ(p.size(), 4u);
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_NE(p[i].impl(), x.impl());
    EXPECT_EQ(p[i].grad_fn(), p[0].grad_fn());
    EXPECT_EQ(p[i].impl()->output_nr, i);
  }
  EXPECT_EQ(p[0].grad_fn()->name(), "split");
  EXPECT_TRUE(x.is_leaf());
}

TEST(SplitTest, PiecesWithoutGradientContributeZeros) {
  // Only the second piece reaches the loss: the others' gradients are zeros.
  Tensor x = f64({1, 2, 3, 4, 5}, {5}).requires_grad_();
  std::vector<Tensor> p = tg::split(x, 2);
  EXPECT_EQ(values(grad_of(p[1], x, f64({7, 8}, {2}))), (V{0, 0, 7, 8, 0}));
  std::vector<Tensor> c = tg::chunk(x, 2);
  EXPECT_EQ(values(grad_of(c[1], x, f64({7, 8}, {2}))), (V{0, 0, 0, 7, 8}));
}

TEST(SplitTest, BackwardJoinsThePiecesGradients) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {3, 2}).requires_grad_();
  std::vector<Tensor> p = tg::split(x, std::vector<int64_t>{2, 1});
  // Reassembled in the other order, so each piece's gradient must go back to its place.
  Tensor y = tg::cat({p[1], p[0]});
  EXPECT_EQ(values(grad_of(y, x, f64({10, 20, 30, 40, 50, 60}, {3, 2}))),
            (V{30, 40, 50, 60, 10, 20}));
}

TEST(SplitTest, BackwardTakesTransposedPieceGradients) {
  // Each piece is used transposed, so its gradient arrives as a transposed view.
  Tensor x = f64({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}).requires_grad_();
  std::vector<Tensor> p = tg::split(x, 2);
  Tensor y = tg::cat({p[0].t(), p[1].t()});
  EXPECT_EQ(values(grad_of(y, x, f64({10, 20, 30, 40, 50, 60, 70, 80}, {4, 2}))),
            (V{10, 30, 20, 40, 50, 70, 60, 80}));
}

TEST(SplitTest, EmptyDimGivesOneEmptyPiece) {
  Tensor x = tg::zeros({0, 2});
  for (int64_t size : {0, 3}) {
    std::vector<Tensor> p = tg::split(x, size);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].shape(), (Shape{0, 2}));
  }
}

TEST(SplitTest, KeepsEveryDType) {
  Tensor i = tg::tensor({1, 2, 3}, {3});
  EXPECT_EQ(tg::split(i, 2)[1].to_vector<int64_t>(), (std::vector<int64_t>{3}));
  for (tg::DType dt : {tg::kFloat32, tg::kFloat16, tg::kBFloat16}) {
    std::vector<Tensor> p = tg::chunk(f64({0.5, 1, -2, 8}, {2, 2}).to(dt), 2, 1);
    EXPECT_EQ(p[1].dtype(), dt);
    EXPECT_EQ(values(p[1]), (V{1, 8}));
  }
}

TEST(SplitTest, Gradcheck) {
  tg::Generator gen(13);
  // Pieces reordered and one dropped: the dropped piece's gradient must be zero.
  auto fn = [](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = tg::split(in[0], 2, 1);
    return tg::cat({p[2], p[0]}, 1);
  };
  EXPECT_GRADCHECK(fn, {leaf({3, 5}, gen)});
  EXPECT_GRADCHECK(fn, {transposed_leaf(2, 6, gen)});
  EXPECT_GRADCHECK(fn, {swapped_leaf({1, 5, 2}, 0, 2, gen)});  // (2, 5, 1), size-1 dim
  auto sizes = [](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = tg::split(in[0], std::vector<int64_t>{1, 3, 0}, 0);
    return tg::cat({p[1], p[2], p[0]}, 0);
  };
  EXPECT_GRADCHECK(sizes, {transposed_leaf(4, 2, gen)});
}

TEST(ChunkTest, UsesCeilSizesAndMayGiveFewerPieces) {
  Tensor x = f64({0, 1, 2, 3, 4}, {5});
  EXPECT_EQ(shapes_of(tg::chunk(x, 3)), (std::vector<Shape>{{2}, {2}, {1}}));
  EXPECT_EQ(values(tg::chunk(x, 3)[2]), (V{4}));
  // 6 elements in 4 chunks: ceil(6 / 4) = 2, so only three pieces.
  EXPECT_EQ(shapes_of(tg::chunk(tg::zeros({6}), 4)), (std::vector<Shape>{{2}, {2}, {2}}));
  EXPECT_EQ(shapes_of(tg::chunk(tg::zeros({2}), 5)), (std::vector<Shape>{{1}, {1}}));
  // An empty dim gives `chunks` empty pieces, as in PyTorch.
  EXPECT_EQ(shapes_of(tg::chunk(tg::zeros({2, 0}), 3, 1)),
            (std::vector<Shape>{{2, 0}, {2, 0}, {2, 0}}));
}

TEST(ChunkTest, Gradcheck) {
  tg::Generator gen(14);
  auto fn = [](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = tg::chunk(in[0], 3, -1);
    return tg::stack({p[0], p[2]}, 0);
  };
  EXPECT_GRADCHECK(fn, {leaf({2, 6}, gen)});
  EXPECT_GRADCHECK(fn, {transposed_leaf(3, 3, gen)});
  EXPECT_GRADCHECK(fn, {leaf({1, 4, 3}, gen)});
}

TEST(SplitTest, ErrorsNameTheProblem) {
  Tensor x = tg::zeros({2, 3});
  EXPECT_TG_THROW(tg::split(x, -1), ValueError, "split", "non-negative", "-1");
  EXPECT_TG_THROW(tg::split(x, 0, 1), ValueError, "split", "0", "dim 1", "size 3");
  EXPECT_TG_THROW(tg::split(x, std::vector<int64_t>{4, -1}, 1), ValueError, "split", "-1",
                  "position 1");
  EXPECT_TG_THROW(tg::split(x, std::vector<int64_t>{1, 1}, 1), ValueError, "split", "[1, 1]",
                  "sum to 2", "(2, 3)", "size 3");
  EXPECT_TG_THROW(tg::split(tg::scalar_tensor(1), 1), ShapeError, "split", "0-d");
  EXPECT_TG_THROW(tg::split(x, 1, 2), IndexError, "split", "dim 2");
  EXPECT_TG_THROW(tg::chunk(x, 0), ValueError, "chunk", "positive", "0");
  EXPECT_TG_THROW(tg::chunk(x, -2), ValueError, "chunk", "-2");
  EXPECT_TG_THROW(tg::chunk(tg::scalar_tensor(1), 1), ShapeError, "chunk", "0-d");
  EXPECT_TG_THROW(tg::chunk(x, 2, -3), IndexError, "chunk", "dim -3");
}

}  // namespace
