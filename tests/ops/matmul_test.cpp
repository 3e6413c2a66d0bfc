// tests/ops/matmul_test.cpp — matmul: torch.matmul's shape rules, values, gradients, errors.
#include "test_util.h"

namespace tg {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;

/// A 1-D float64 tensor from a vector.
Tensor vec64(std::initializer_list<double> values) { return tensor(std::vector<double>(values)); }

/// All values of t (any floating dtype) as doubles, row-major.
std::vector<double> values_of(const Tensor& t) { return t.to(kFloat64).to_vector<double>(); }

/// A (2, 3) and B (3, 2) with small integer entries.
Tensor mat_a(DType dtype = kFloat32) {
  return tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}).to(dtype);
}
Tensor mat_b(DType dtype = kFloat32) {
  return tensor({7.0, 8.0, 9.0, 10.0, 11.0, 12.0}, {3, 2}).to(dtype);
}

/// The textbook i-j-k product of two matrices, with at() and a double accumulator: an
/// independent reference for the kernel.
std::vector<double> reference_mm(const Tensor& a, const Tensor& b) {
  const Tensor a64 = a.to(kFloat64), b64 = b.to(kFloat64);
  std::vector<double> out;
  for (int64_t i = 0; i < a.size(0); ++i) {
    for (int64_t j = 0; j < b.size(1); ++j) {
      double s = 0;
      for (int64_t k = 0; k < a.size(1); ++k) s += a64.at<double>({i, k}) * b64.at<double>({k, j});
      out.push_back(s);
    }
  }
  return out;
}

// ---------------------------------------------------------------- forward values
TEST(MatmulTest, MatrixTimesMatrix) {
  const Tensor c = matmul(mat_a(), mat_b());
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_THAT(values_of(c), ElementsAre(58, 64, 139, 154));
}

TEST(MatmulTest, DotOfTwoVectorsIsZeroDim) {
  const Tensor d = matmul(tensor({1.f, 2.f, 3.f}), tensor({4.f, 5.f, 6.f}));
  EXPECT_EQ(d.shape(), Shape{});
  EXPECT_EQ(d.item<float>(), 32.0f);
}

TEST(MatmulTest, VectorTimesMatrixAndMatrixTimesVector) {
  // (2) @ (2, 3): the vector acts as a (1, 2) row, and the 1 is removed again.
  const Tensor vm = matmul(tensor({1.f, 2.f}), mat_a().reshape({2, 3}));
  EXPECT_EQ(vm.shape(), Shape{3});
  EXPECT_THAT(values_of(vm), ElementsAre(9, 12, 15));
  // (2, 3) @ (3): the vector acts as a (3, 1) column.
  const Tensor mv = matmul(mat_a(), tensor({1.f, 0.f, -1.f}));
  EXPECT_EQ(mv.shape(), Shape{2});
  EXPECT_THAT(values_of(mv), ElementsAre(-2, -2));
}

TEST(MatmulTest, VectorWithBatchedMatrix) {
  Generator gen(10);
  const Tensor v = randn({3}, kFloat32, gen);
  const Tensor m = randn({2, 3, 4}, kFloat32, gen);
  const Tensor vm = matmul(v, m);  // (3) @ (2, 3, 4) -> (2, 4)
  EXPECT_EQ(vm.shape(), (Shape{2, 4}));
  const Tensor mt = randn({2, 4, 3}, kFloat32, gen);
  const Tensor mv = matmul(mt, v);  // (2, 4, 3) @ (3) -> (2, 4)
  EXPECT_EQ(mv.shape(), (Shape{2, 4}));
  for (int64_t s = 0; s < 2; ++s) {
    EXPECT_THAT(values_of(vm[s]),
                Pointwise(DoubleNear(1e-5), reference_mm(v.reshape({1, 3}), m[s])));
    EXPECT_THAT(values_of(mv[s]),
                Pointwise(DoubleNear(1e-5), reference_mm(mt[s], v.reshape({3, 1}))));
  }
}

TEST(MatmulTest, BatchDimsBroadcast) {
  // (j, 1, n, m) @ (k, m, p) -> (j, k, n, p), as torch.matmul.
  Generator gen(11);
  const Tensor a = randn({2, 1, 3, 4}, kFloat32, gen);
  const Tensor b = randn({5, 4, 2}, kFloat32, gen);
  const Tensor c = matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 5, 3, 2}));
  for (int64_t j = 0; j < 2; ++j) {
    for (int64_t k = 0; k < 5; ++k) {
      EXPECT_THAT(values_of(c[j][k]), Pointwise(DoubleNear(1e-5), reference_mm(a[j][0], b[k])));
    }
  }
  // A plain matrix broadcasts against a batch.
  EXPECT_EQ(matmul(randn({3, 4}, kFloat32, gen), b[0].unsqueeze(0).expand({6, 4, 2})).shape(),
            (Shape{6, 3, 2}));
}

TEST(MatmulTest, NonContiguousInputs) {
  // A transposed matrix and a strided slice give the same product as contiguous copies.
  Generator gen(12);
  const Tensor at = randn({4, 3}, kFloat32, gen).t();                  // (3, 4), strides (1, 3)
  const Tensor bs = randn({4, 10}, kFloat32, gen).slice(1, 0, 10, 2);  // (4, 5), stride 2
  ASSERT_FALSE(at.is_contiguous());
  ASSERT_FALSE(bs.is_contiguous());
  EXPECT_THAT(values_of(matmul(at, bs)), Pointwise(DoubleNear(1e-5), reference_mm(at, bs)));
}

TEST(MatmulTest, EmptyDims) {
  EXPECT_EQ(matmul(zeros({0, 3}), zeros({3, 2})).shape(), (Shape{0, 2}));
  // An empty inner dim is an empty sum: zeros, as in PyTorch.
  EXPECT_THAT(values_of(matmul(ones({2, 0}), ones({0, 2}))), ElementsAre(0, 0, 0, 0));
  EXPECT_EQ(matmul(zeros({0}), zeros({0})).item<float>(), 0.0f);
  EXPECT_EQ(matmul(zeros({0, 2, 3}), zeros({3, 4})).shape(), (Shape{0, 2, 4}));
}

TEST(MatmulTest, HalfPrecisionAndBFloat16) {
  const Tensor h = matmul(mat_a(kFloat16), mat_b(kFloat16));
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_THAT(values_of(h), ElementsAre(58, 64, 139, 154));
  EXPECT_THAT(values_of(matmul(mat_a(kBFloat16), mat_b(kBFloat16))), ElementsAre(58, 64, 139, 154));
  // Accumulated in float: in float16 the dot product of 4096 ones would stall at 2048, in
  // bfloat16 1000 ones would stall at 256.
  EXPECT_EQ(matmul(ones({4096}, kFloat16), ones({4096}, kFloat16)).to(kFloat32).item<float>(),
            4096.0f);
  EXPECT_EQ(matmul(ones({1000}, kBFloat16), ones({1000}, kBFloat16)).to(kFloat32).item<float>(),
            1000.0f);
}

TEST(MatmulTest, Float64AccumulatesInDouble) {
  const Tensor d = matmul(vec64({1.0, 1e-10}), vec64({1.0, 1.0}));
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.item<double>(), 1.0 + 1e-10);
}

// ---------------------------------------------------------------- gradients
TEST(MatmulTest, BackwardLiteral) {
  // out = A @ B and L = sum(out), so dout is all ones:
  // dA = ones @ B^T: dA[i, k] = sum_j B[k, j], the row sums of B (15, 19, 23) in every row;
  // dB = A^T @ ones: dB[k, j] = sum_i A[i, k], the column sums of A (5, 7, 9) in every column.
  Tensor a = mat_a().requires_grad_();
  Tensor b = mat_b().requires_grad_();
  backward(sum(matmul(a, b)));
  EXPECT_THAT(values_of(a.grad()), ElementsAre(15, 19, 23, 15, 19, 23));
  EXPECT_THAT(values_of(b.grad()), ElementsAre(5, 5, 7, 7, 9, 9));
  EXPECT_EQ(a.grad().dtype(), kFloat32);
}

TEST(MatmulTest, BackwardSumsOverBroadcastBatchDims) {
  // b (3, 2) is used by each of the 4 batch entries of a, so db adds 4 contributions.
  Tensor a = ones({4, 2, 3}, kFloat64).requires_grad_();
  Tensor b = mat_b(kFloat64).requires_grad_();
  backward(sum(matmul(a, b)));
  EXPECT_EQ(b.grad().shape(), (Shape{3, 2}));
  EXPECT_THAT(values_of(b.grad()), ElementsAre(8, 8, 8, 8, 8, 8));
  EXPECT_EQ(a.grad().shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(a.grad().at<double>({3, 1, 2}), 23.0);
}

TEST(MatmulTest, OnlyTheInputThatNeedsAGradientGetsOne) {
  Tensor a = mat_a(kFloat64).requires_grad_();
  const Tensor b = mat_b(kFloat64);
  const auto g = grad({sum(matmul(a, b))}, {a});
  EXPECT_THAT(values_of(g[0]), ElementsAre(15, 19, 23, 15, 19, 23));
}

TEST(MatmulTest, GradcheckMatrices) {
  Generator gen(20);
  const auto mm = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  EXPECT_GRADCHECK(mm, {randn({3, 4}, kFloat64, gen).requires_grad_(),
                        randn({4, 2}, kFloat64, gen).requires_grad_()});
  // Size-1 dims: an outer product (3, 1) @ (1, 2), and a (1, 3) @ (3, 1) "dot".
  EXPECT_GRADCHECK(mm, {randn({3, 1}, kFloat64, gen).requires_grad_(),
                        randn({1, 2}, kFloat64, gen).requires_grad_()});
  EXPECT_GRADCHECK(mm, {randn({1, 3}, kFloat64, gen).requires_grad_(),
                        randn({3, 1}, kFloat64, gen).requires_grad_()});
  // Non-contiguous leaves: both transposed.
  EXPECT_GRADCHECK(mm, {randn({4, 3}, kFloat64, gen).t().requires_grad_(),
                        randn({2, 4}, kFloat64, gen).t().requires_grad_()});
  // Only one side requires grad.
  EXPECT_GRADCHECK(mm,
                   {randn({2, 3}, kFloat64, gen), randn({3, 5}, kFloat64, gen).requires_grad_()});
}

TEST(MatmulTest, GradcheckVectors) {
  Generator gen(21);
  const auto mm = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  EXPECT_GRADCHECK(
      mm, {randn({4}, kFloat64, gen).requires_grad_(), randn({4}, kFloat64, gen).requires_grad_()});
  EXPECT_GRADCHECK(mm, {randn({4}, kFloat64, gen).requires_grad_(),
                        randn({2, 4, 3}, kFloat64, gen).requires_grad_()});
  EXPECT_GRADCHECK(mm, {randn({2, 3, 4}, kFloat64, gen).requires_grad_(),
                        randn({4}, kFloat64, gen).requires_grad_()});
  EXPECT_GRADCHECK(mm, {randn({3, 4}, kFloat64, gen).requires_grad_(),
                        randn({8}, kFloat64, gen).slice(0, 0, 8, 2).requires_grad_()});
}

TEST(MatmulTest, GradcheckBatched) {
  Generator gen(22);
  const auto mm = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  // (j, 1, n, m) @ (k, m, p): both sides broadcast along a batch dim.
  EXPECT_GRADCHECK(mm, {randn({2, 1, 3, 4}, kFloat64, gen).requires_grad_(),
                        randn({3, 4, 2}, kFloat64, gen).requires_grad_()});
  // A matrix against a batch, and a batch with a size-1 batch dim.
  EXPECT_GRADCHECK(mm, {randn({3, 4}, kFloat64, gen).requires_grad_(),
                        randn({2, 4, 2}, kFloat64, gen).requires_grad_()});
  EXPECT_GRADCHECK(mm, {randn({1, 2, 3}, kFloat64, gen).requires_grad_(),
                        randn({4, 3, 2}, kFloat64, gen).requires_grad_()});
  // Non-contiguous batched leaves.
  EXPECT_GRADCHECK(mm, {randn({2, 4, 3}, kFloat64, gen).transpose(1, 2).requires_grad_(),
                        randn({2, 2, 4}, kFloat64, gen).transpose(-1, -2).requires_grad_()});
}

// ---------------------------------------------------------------- errors
TEST(MatmulErrorTest, InnerDimsDisagree) {
  EXPECT_TG_THROW(matmul(zeros({2, 3}), zeros({4, 5})), ShapeError, "matmul", "(2, 3) @ (4, 5)",
                  "inner dims 3 vs 4");
  EXPECT_TG_THROW(matmul(zeros({3}), zeros({4})), ShapeError, "matmul", "(3) @ (4)",
                  "inner dims 3 vs 4");
  EXPECT_TG_THROW(matmul(zeros({3}), zeros({2, 4, 5})), ShapeError, "(3) @ (2, 4, 5)",
                  "inner dims 3 vs 4");
  EXPECT_TG_THROW(matmul(zeros({2, 5, 3}), zeros({2})), ShapeError, "(2, 5, 3) @ (2)",
                  "inner dims 3 vs 2");
}

TEST(MatmulErrorTest, BatchDimsDoNotBroadcast) {
  EXPECT_TG_THROW(matmul(zeros({2, 2, 3}), zeros({3, 3, 4})), ShapeError, "matmul",
                  "(2, 2, 3) @ (3, 3, 4)", "batch dims (2) and (3)");
  EXPECT_TG_THROW(matmul(zeros({4, 2, 1, 3}), zeros({5, 3, 1})), ShapeError,
                  "(4, 2, 1, 3) @ (5, 3, 1)", "batch dims (4, 2) and (5)", "2 vs 5");
}

TEST(MatmulErrorTest, ZeroDimInputs) {
  EXPECT_TG_THROW(matmul(scalar_tensor(2.0), zeros({3})), ShapeError, "matmul", "() @ (3)", "0-d");
  EXPECT_TG_THROW(matmul(zeros({3}), scalar_tensor(2.0)), ShapeError, "matmul", "(3) @ ()", "0-d");
}

TEST(MatmulErrorTest, DTypes) {
  EXPECT_TG_THROW(matmul(zeros({2, 3}), zeros({3, 4}, kFloat64)), DTypeError, "matmul",
                  "(2, 3) @ (3, 4)", "float32 vs float64");
  EXPECT_TG_THROW(matmul(tensor({1, 2}, {2}), tensor({1, 2}, {2})), DTypeError, "matmul",
                  "floating-point", "int64");
  EXPECT_TG_THROW(matmul(zeros({2}), tensor({true, false}, {2})), DTypeError, "matmul", "bool");
}

}  // namespace
}  // namespace tg
