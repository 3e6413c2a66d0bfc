// tests/ops/fast/matmul_test.cpp — matmul's fast kernel (ops/fast/matmul.cpp: one blocked
// GEMM per batch entry, transposed and broadcast operands read in place, threads over batch
// entries) against the reference kernel, and across thread counts.
#include "core/parallel.h"
#include "test_util.h"

namespace tg {
namespace {

std::vector<double> values_of(const Tensor& t) { return t.to(kFloat64).to_vector<double>(); }

// The fast path runs one blocked gemm per batch element, reading transposed and broadcast
// operands in place, with threads over batch elements.

/// out, da and db of a (batched) matmul with gradient gout, on the path `reference` picks.
std::vector<std::vector<double>> matmul_results(const Tensor& a, const Tensor& b,
                                                const Tensor& gout, bool reference) {
  KernelPathGuard path(testing::kernels_for(reference));
  const Tensor out = matmul(a, b);
  const auto g = grad({out}, {a, b}, {gout});
  return {values_of(out), values_of(g[0]), values_of(g[1])};
}

TEST(FastMatmulTest, BatchedAgreesWithReference) {
  // Sums of m products in another order (blocked, fused multiply-adds) than the plain i-k-j
  // loop: a few ulp of sum |a_ik b_kj|, which for standard normals and m <= 130 stays below
  // 1e-4 (float32) and 1e-12 (float64) times (1 + |value|).
  struct Case {
    Shape a, b;
    bool transpose_b;  // b given as a transposed view of a (..., p, m) tensor
  };
  for (const DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-12;
    Generator gen(13);
    for (const Case& c : {Case{{1, 1, 1}, {1, 1, 1}, false}, Case{{7, 3, 5}, {7, 5, 2}, true},
                          Case{{2, 1, 33, 130}, {3, 130, 17}, false},
                          Case{{4, 65, 9}, {9, 129}, true}, Case{{3, 20, 7}, {1, 7, 20}, false}}) {
      const Tensor a = randn(c.a, dt, gen).requires_grad_();
      Shape bt = c.b;
      if (c.transpose_b) std::swap(bt[bt.size() - 1], bt[bt.size() - 2]);
      Tensor b = randn(bt, dt, gen);
      if (c.transpose_b) b = b.transpose(-1, -2);
      b.requires_grad_();
      const Tensor gout = randn(matmul(a.detach(), b.detach()).shape(), dt, gen);
      const auto fast = matmul_results(a, b, gout, false), ref = matmul_results(a, b, gout, true);
      for (size_t i = 0; i < fast.size(); ++i) {
        ASSERT_EQ(fast[i].size(), ref[i].size());
        for (size_t e = 0; e < fast[i].size(); ++e) {
          ASSERT_NEAR(fast[i][e], ref[i][e], tol * (1 + std::abs(ref[i][e])))
              << dt << " a " << c.a << " b " << c.b << " result " << i << " element " << e;
        }
      }
    }
  }
}

TEST(FastMatmulTest, BatchedIsBitIdenticalForOneAndTwoThreads) {
  // Each batch element's product runs on one thread in a fixed order.
  Generator gen(14);
  const Tensor a = randn({8, 64, 64}, kFloat32, gen).requires_grad_();
  const Tensor b = randn({8, 64, 64}, kFloat32, gen).requires_grad_();
  const Tensor gout = randn({8, 64, 64}, kFloat32, gen);
  std::vector<std::vector<double>> one, two;
  {
    NumThreadsGuard threads(1);
    one = matmul_results(a, b, gout, false);
  }
  {
    NumThreadsGuard threads(2);
    two = matmul_results(a, b, gout, false);
  }
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace tg
