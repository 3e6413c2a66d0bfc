// tests/ops/index_test.cpp — index_select, gather, where, masked_fill.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace {

using tg::Shape;
using tg::Tensor;
using V = std::vector<double>;

V values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }
Tensor f64(V v, const Shape& shape) { return tg::tensor(v, shape); }
Tensor ids(std::vector<int64_t> v, const Shape& shape) { return tg::tensor(v, shape); }
Tensor ids(std::vector<int64_t> v) { return tg::tensor(v); }
Tensor mask(std::vector<bool> v, const Shape& shape) { return tg::tensor(v, shape); }
using tg::testing::grad_of;
using tg::testing::leaf;
using tg::testing::swapped_leaf;

// ---------------------------------------------------------------- index_select
TEST(IndexSelectTest, PicksRowsInIndexOrder) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor y = tg::index_select(x, 0, ids({2, 0, 2}));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values(y), (V{5, 6, 1, 2, 5, 6}));
}

TEST(IndexSelectTest, PicksAlongAnInnerDim) {
  Tensor x = f64({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2});
  Tensor y = tg::index_select(x, -2, ids({1}));
  EXPECT_EQ(y.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(values(y), (V{3, 4, 9, 10}));
  EXPECT_EQ(values(tg::index_select(x, 2, ids({1, 1, 0}))),
            (V{2, 2, 1, 4, 4, 3, 6, 6, 5, 8, 8, 7, 10, 10, 9, 12, 12, 11}));
}

TEST(IndexSelectTest, AcceptsAZeroDIndexAndAZeroDInput) {
  Tensor x = f64({1, 2, 3}, {3});
  Tensor y = tg::index_select(x, 0, tg::scalar_tensor(2, tg::kInt64));
  EXPECT_EQ(y.shape(), (Shape{1}));  // the dim stays, with size 1 (as in PyTorch)
  EXPECT_EQ(values(y), (V{3}));
  Tensor s = tg::index_select(tg::scalar_tensor(5.0, tg::kFloat64), 0, ids({0}));
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_EQ(values(s), (V{5}));
  Tensor x0 = tg::scalar_tensor(5.0, tg::kFloat64).requires_grad_();
  Tensor dx0 = grad_of(tg::index_select(x0, -1, ids({0})), x0, tg::scalar_tensor(3, tg::kFloat64));
  EXPECT_EQ(dx0.shape(), (Shape{}));
  EXPECT_EQ(values(dx0), (V{3}));
}

TEST(IndexSelectTest, AnEmptyIndexGivesAnEmptyDim) {
  Tensor y = tg::index_select(tg::zeros({3, 2}), 0, ids({}, {0}));
  EXPECT_EQ(y.shape(), (Shape{0, 2}));
}

TEST(IndexSelectTest, ReadsNonContiguousInputsAndIndices) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {3, 2}).t();      // [[1, 3, 5], [2, 4, 6]]
  Tensor index = ids({2, 9, 0, 9}).slice(0, 0, 4, 2);  // [2, 0], stride 2
  EXPECT_EQ(values(tg::index_select(x, 1, index)), (V{5, 1, 6, 2}));
}

TEST(IndexSelectTest, KeepsEveryDType) {
  EXPECT_EQ(tg::index_select(tg::tensor({7, 8, 9}, {3}), 0, ids({2, 0})).to_vector<int64_t>(),
            (std::vector<int64_t>{9, 7}));
  EXPECT_EQ(tg::index_select(mask({true, false}, {2}), 0, ids({1, 0})).to_vector<bool>(),
            (std::vector<bool>{false, true}));
  for (tg::DType dt : {tg::kFloat32, tg::kFloat16, tg::kBFloat16}) {
    Tensor y = tg::index_select(f64({0.5, -1.5, 2.25}, {3}).to(dt), 0, ids({1, 2}));
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(values(y), (V{-1.5, 2.25}));
  }
}

TEST(IndexSelectTest, RepeatedIdsAccumulateTheirGradients) {
  Tensor x = f64({1, 2, 3}, {3}).requires_grad_();
  Tensor y = tg::index_select(x, 0, ids({0, 0, 2, 0}));
  EXPECT_EQ(values(grad_of(y, x, f64({1, 2, 3, 4}, {4}))), (V{7, 0, 3}));
  // Along an inner dim too.
  Tensor m = f64({1, 2, 3, 4}, {2, 2}).requires_grad_();
  Tensor z = tg::index_select(m, 1, ids({1, 1}));
  EXPECT_EQ(values(grad_of(z, m, f64({1, 10, 100, 1000}, {2, 2}))), (V{0, 11, 0, 1100}));
}

TEST(IndexSelectTest, Float16GradientsAccumulateInFloat) {
  // 3000 copies of element 0: float16 cannot represent 2049, so adding 1 at a time in float16
  // would stop at 2048. Summing in float gives 3000, which float16 holds exactly.
  Tensor x = tg::zeros({2}, tg::kFloat16).requires_grad_();
  Tensor y = tg::index_select(x, 0, tg::zeros({3000}, tg::kInt64));
  Tensor dx = grad_of(y, x, tg::ones({3000}, tg::kFloat16));
  EXPECT_EQ(dx.dtype(), tg::kFloat16);
  EXPECT_EQ(values(dx), (V{3000, 0}));
}

TEST(IndexSelectTest, Gradcheck) {
  tg::Generator gen(21);
  auto along = [](int64_t dim, Tensor index) {
    return
        [dim, index](const std::vector<Tensor>& in) { return tg::index_select(in[0], dim, index); };
  };
  EXPECT_GRADCHECK(along(0, ids({3, 1, 1, 0})), {leaf({4, 3}, gen)});
  EXPECT_GRADCHECK(along(1, ids({0, 2, 0})), {swapped_leaf({3, 2}, 0, 1, gen)});
  EXPECT_GRADCHECK(along(-1, ids({1, 1})), {swapped_leaf({3, 1, 2}, 0, 2, gen)});  // (2, 1, 3)
  EXPECT_GRADCHECK(along(1, ids({0, 0})), {leaf({2, 1, 3}, gen)});
}

TEST(IndexSelectTest, ErrorsNameTheBadIdItsPositionAndTheDimSize) {
  Tensor x = tg::zeros({3, 2});
  EXPECT_TG_THROW(tg::index_select(x, 0, ids({0, 3})), IndexError, "index_select", "index 3",
                  "position 1", "dim 0", "size 3");
  EXPECT_TG_THROW(tg::index_select(x, 1, ids({1, 0, -1})), IndexError, "index_select", "index -1",
                  "position 2", "dim 1", "size 2");
  EXPECT_TG_THROW(tg::index_select(x, 0, ids({std::numeric_limits<int64_t>::min()})), IndexError,
                  "index_select", "-9223372036854775808");
  EXPECT_TG_THROW(tg::index_select(x, 0, f64({0}, {1})), DTypeError, "index_select", "int64",
                  "float64");
  EXPECT_TG_THROW(tg::index_select(x, 0, mask({true}, {1})), DTypeError, "index_select", "bool");
  EXPECT_TG_THROW(tg::index_select(x, 0, ids({0, 1}, {1, 2})), ShapeError, "index_select", "1-D",
                  "(1, 2)");
  EXPECT_TG_THROW(tg::index_select(x, 2, ids({0})), IndexError, "index_select", "dim 2");
  EXPECT_TG_THROW(tg::index_select(tg::scalar_tensor(1), 0, ids({0, 0})), ShapeError,
                  "index_select", "0-d", "got 2");
  EXPECT_TG_THROW(tg::index_select(tg::zeros({0, 2}), 0, ids({0})), IndexError, "index_select",
                  "size 0");
}

// ---------------------------------------------------------------- gather
TEST(GatherTest, PicksOneElementPerIndexPosition) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  // dim 1: out[i][j] = x[i][index[i][j]]
  Tensor y = tg::gather(x, 1, ids({2, 0, 1, 1}, {2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(values(y), (V{3, 1, 5, 5}));
  // dim 0: out[i][j] = x[index[i][j]][j]
  EXPECT_EQ(values(tg::gather(x, 0, ids({1, 0, 1}, {1, 3}))), (V{4, 2, 6}));
  EXPECT_EQ(values(tg::gather(x, -2, ids({1, 0}, {1, 2}))), (V{4, 2}));
}

TEST(GatherTest, IndexMayBeLongerAlongDimAndShorterElsewhere) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = tg::gather(x, 1, ids({0, 0, 2, 1}, {1, 4}));  // row 0 only, four picks
  EXPECT_EQ(y.shape(), (Shape{1, 4}));
  EXPECT_EQ(values(y), (V{1, 1, 3, 2}));
  EXPECT_EQ(tg::gather(x, 1, ids({}, {2, 0})).shape(), (Shape{2, 0}));
}

TEST(GatherTest, WorksOnZeroDAndThreeDTensors) {
  EXPECT_EQ(
      values(tg::gather(tg::scalar_tensor(4.0, tg::kFloat64), 0, tg::scalar_tensor(0, tg::kInt64))),
      (V{4}));
  Tensor x0 = tg::scalar_tensor(4.0, tg::kFloat64).requires_grad_();
  Tensor y0 = tg::gather(x0, 0, tg::scalar_tensor(0, tg::kInt64));
  EXPECT_EQ(values(grad_of(y0, x0, tg::scalar_tensor(2, tg::kFloat64))), (V{2}));
  Tensor x = f64({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  // dim 2 of a 3-D tensor: out[i][j][k] = x[i][j][index[i][j][k]]
  EXPECT_EQ(values(tg::gather(x, 2, ids({1, 0, 0, 0, 1, 1, 0, 1}, {2, 2, 2}))),
            (V{2, 1, 3, 3, 6, 6, 7, 8}));
}

TEST(GatherTest, ReadsNonContiguousInputsAndIndices) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {3, 2}).t();  // [[1, 3, 5], [2, 4, 6]]
  Tensor index = ids({2, 1, 0, 0}, {2, 2}).t();    // [[2, 0], [1, 0]]
  EXPECT_EQ(values(tg::gather(x, 1, index)), (V{5, 1, 4, 2}));
}

TEST(GatherTest, KeepsEveryDType) {
  EXPECT_EQ(tg::gather(tg::tensor({7, 8, 9}, {3}), 0, ids({2, 2})).to_vector<int64_t>(),
            (std::vector<int64_t>{9, 9}));
  for (tg::DType dt : {tg::kFloat32, tg::kFloat16, tg::kBFloat16}) {
    Tensor y = tg::gather(f64({0.5, -1.5, 2.25, 4}, {2, 2}).to(dt), 1, ids({1, 0}, {2, 1}));
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(values(y), (V{-1.5, 2.25}));
  }
}

TEST(GatherTest, RepeatedIdsAccumulateTheirGradients) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor y = tg::gather(x, 1, ids({2, 2, 2, 0, 1, 0}, {2, 3}));
  EXPECT_EQ(values(grad_of(y, x, f64({1, 2, 3, 10, 20, 30}, {2, 3}))), (V{0, 0, 6, 40, 20, 0}));
}

TEST(GatherTest, Gradcheck) {
  tg::Generator gen(22);
  auto along = [](int64_t dim, Tensor index) {
    return [dim, index](const std::vector<Tensor>& in) { return tg::gather(in[0], dim, index); };
  };
  EXPECT_GRADCHECK(along(1, ids({2, 0, 2, 1, 1, 1}, {2, 3})), {leaf({2, 3}, gen)});
  EXPECT_GRADCHECK(along(0, ids({0, 2, 2, 1}, {2, 2})), {swapped_leaf({3, 3}, 0, 1, gen)});
  EXPECT_GRADCHECK(along(-1, ids({1, 0, 1, 1}, {2, 1, 2}).transpose(0, 2)),  // (2, 1, 2)
                   {swapped_leaf({2, 1, 3}, 0, 2, gen)});                    // (3, 1, 2)
}

TEST(GatherTest, ErrorsNameTheBadIdItsPositionAndTheDimSize) {
  Tensor x = tg::zeros({2, 3});
  EXPECT_TG_THROW(tg::gather(x, 1, ids({0, 1, 2, 3}, {2, 2})), IndexError, "gather", "index 3",
                  "position (1, 1)", "dim 1", "size 3");
  EXPECT_TG_THROW(tg::gather(x, 0, ids({0, -1}, {1, 2})), IndexError, "gather", "index -1",
                  "position (0, 1)", "dim 0", "size 2");
  EXPECT_TG_THROW(tg::gather(x, 1, f64({0, 0}, {2, 1})), DTypeError, "gather", "int64", "float64");
  EXPECT_TG_THROW(tg::gather(x, 1, ids({0, 0})), ShapeError, "gather", "(2)", "(2, 3)", "rank");
  EXPECT_TG_THROW(tg::gather(x, 1, ids({0, 0, 0}, {3, 1})), ShapeError, "gather", "(3, 1)",
                  "(2, 3)", "dim 0", "3 > 2");
  EXPECT_TG_THROW(tg::gather(x, -3, ids({0}, {1, 1})), IndexError, "gather", "dim -3");
}

// ---------------------------------------------------------------- where
TEST(WhereTest, ChoosesElementwiseWithBroadcasting) {
  Tensor cond = mask({true, false}, {2, 1});
  Tensor a = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = f64({-1}, {1});
  Tensor y = tg::where(cond, a, b);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y), (V{1, 2, 3, -1, -1, -1}));
  // cond alone may set the shape: (3) with scalars a and b
  Tensor z = tg::where(mask({false, true, true}, {3}), tg::scalar_tensor(1.0, tg::kFloat64),
                       tg::scalar_tensor(0.0, tg::kFloat64));
  EXPECT_EQ(values(z), (V{0, 1, 1}));
}

TEST(WhereTest, KeepsEveryDTypeAndNonFiniteValues) {
  Tensor c = mask({true, false}, {2});
  EXPECT_EQ(tg::where(c, tg::tensor({1, 2}, {2}), tg::tensor({3, 4}, {2})).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 4}));
  const double inf = std::numeric_limits<double>::infinity();
  for (tg::DType dt : {tg::kFloat32, tg::kFloat16, tg::kBFloat16}) {
    Tensor y = tg::where(c, f64({inf, 2}, {2}).to(dt), f64({3, -0.5}, {2}).to(dt));
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(values(y), (V{inf, -0.5}));
  }
}

TEST(WhereTest, GradientGoesToTheChosenInputEvenWhereBothAreEqual) {
  // a == b everywhere: the gradient still goes only to the input cond picked (PyTorch too).
  Tensor a = f64({5, 5, 5}, {3}).requires_grad_();
  Tensor b = f64({5, 5, 5}, {3}).requires_grad_();
  Tensor y = tg::where(mask({true, false, true}, {3}), a, b);
  auto g = tg::grad({y}, {a, b}, {f64({1, 2, 3}, {3})});
  EXPECT_EQ(values(g[0]), (V{1, 0, 3}));
  EXPECT_EQ(values(g[1]), (V{0, 2, 0}));
}

TEST(WhereTest, BroadcastGradientsAreSummedBack) {
  Tensor a = f64({10}, {1}).requires_grad_();
  Tensor b = f64({1, 2, 3}, {3}).requires_grad_();
  Tensor y = tg::where(mask({true, false, true, true, true, false}, {2, 3}), a, b);
  auto g = tg::grad({y}, {a, b}, {tg::ones({2, 3}, tg::kFloat64)});
  EXPECT_EQ(values(g[0]), (V{4}));
  EXPECT_EQ(values(g[1]), (V{0, 1, 1}));
}

TEST(WhereTest, Gradcheck) {
  tg::Generator gen(23);
  auto with = [](Tensor cond) {
    return [cond](const std::vector<Tensor>& in) { return tg::where(cond, in[0], in[1]); };
  };
  EXPECT_GRADCHECK(with(mask({true, false, false, true, true, false}, {2, 3})),
                   {leaf({2, 3}, gen), leaf({2, 3}, gen)});
  EXPECT_GRADCHECK(with(mask({true, false}, {2, 1})),
                   {leaf({3}, gen), swapped_leaf({3, 2}, 0, 1, gen)});
  EXPECT_GRADCHECK(with(mask({false, true, true}, {3, 1, 1})),
                   {leaf({1, 2, 1}, gen), leaf({4}, gen)});
}

TEST(WhereTest, ErrorsNameTheProblem) {
  Tensor a = tg::zeros({2, 3});
  EXPECT_TG_THROW(tg::where(tg::zeros({2, 3}), a, a), DTypeError, "where", "cond", "bool",
                  "float32");
  EXPECT_TG_THROW(tg::where(tg::tensor({1, 0}, {2}), a, a), DTypeError, "where", "int64");
  EXPECT_TG_THROW(tg::where(mask({true}, {1}), a, a.to(tg::kFloat64)), DTypeError, "where",
                  "float32", "float64");
  EXPECT_TG_THROW(tg::where(mask({true}, {1}), a, tg::zeros({2})), ShapeError, "where", "(2, 3)",
                  "(2)");
  EXPECT_TG_THROW(tg::where(mask({true, false}, {2}), a, a), ShapeError, "where", "(2)", "(2, 3)");
}

// ---------------------------------------------------------------- masked_fill
TEST(MaskedFillTest, FillsWhereTheBroadcastMaskIsTrue) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = tg::masked_fill(x, mask({false, true, false}, {3}), -9);
  EXPECT_EQ(values(y), (V{1, -9, 3, 4, -9, 6}));
  EXPECT_EQ(values(x), (V{1, 2, 3, 4, 5, 6}));  // out of place
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(values(tg::masked_fill(x, mask({true, false}, {2, 1}), -inf)),
            (V{-inf, -inf, -inf, 4, 5, 6}));
  EXPECT_EQ(values(tg::masked_fill(x.t(), mask({true, false}, {1, 2}), 0)), (V{0, 4, 0, 5, 0, 6}));
}

TEST(MaskedFillTest, ConvertsTheValueToEveryDType) {
  Tensor m = mask({true, false}, {2});
  EXPECT_EQ(tg::masked_fill(tg::tensor({1, 2}, {2}), m, 2.5).to_vector<int64_t>(),
            (std::vector<int64_t>{2, 2}));  // truncated, as PyTorch does
  EXPECT_EQ(tg::masked_fill(mask({false, false}, {2}), m, 1).to_vector<bool>(),
            (std::vector<bool>{true, false}));
  for (tg::DType dt : {tg::kFloat32, tg::kFloat16, tg::kBFloat16}) {
    Tensor y = tg::masked_fill(f64({1, 2}, {2}).to(dt), m, -0.25);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(values(y), (V{-0.25, 2}));
  }
  Tensor n = tg::masked_fill(f64({1, 2}, {2}).to(tg::kFloat32), m, std::nan(""));
  EXPECT_TRUE(std::isnan(values(n)[0]));
}

TEST(MaskedFillTest, MaskedElementsGetZeroGradientEvenWhenTheValueMatches) {
  // Element 0 is filled with its own value: the output does not change, yet it no longer
  // depends on x, so its gradient is 0 (PyTorch's convention too).
  Tensor x = f64({3, 4, 5}, {3}).requires_grad_();
  Tensor y = tg::masked_fill(x, mask({true, true, false}, {3}), 3);
  EXPECT_EQ(values(y), (V{3, 3, 5}));
  EXPECT_EQ(values(grad_of(y, x, f64({1, 2, 3}, {3}))), (V{0, 0, 3}));
}

TEST(MaskedFillTest, Gradcheck) {
  tg::Generator gen(24);
  auto with = [](Tensor m) {
    return [m](const std::vector<Tensor>& in) { return tg::masked_fill(in[0], m, 0.5); };
  };
  EXPECT_GRADCHECK(with(mask({true, false, false, true, false, true}, {2, 3})),
                   {leaf({2, 3}, gen)});
  EXPECT_GRADCHECK(with(mask({false, true}, {2, 1})), {swapped_leaf({3, 2}, 0, 1, gen)});
  EXPECT_GRADCHECK(with(mask({true, false, true}, {3})), {leaf({2, 1, 3}, gen)});
}

TEST(MaskedFillTest, ErrorsNameTheProblem) {
  Tensor x = tg::zeros({2, 3});
  EXPECT_TG_THROW(tg::masked_fill(x, tg::zeros({2, 3}), 1), DTypeError, "masked_fill", "mask",
                  "bool", "float32");
  EXPECT_TG_THROW(tg::masked_fill(x, tg::tensor({1, 0, 1}, {3}), 1), DTypeError, "masked_fill",
                  "int64");
  EXPECT_TG_THROW(tg::masked_fill(x, mask({true, false}, {2}), 1), ShapeError, "masked_fill", "(2)",
                  "(2, 3)");
  // The mask may not stretch x.
  EXPECT_TG_THROW(
      tg::masked_fill(tg::zeros({3}), mask({true, false, true, true, false, true}, {2, 3}), 1),
      ShapeError, "masked_fill", "(2, 3)", "(3)");
}

}  // namespace
