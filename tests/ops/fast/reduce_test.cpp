// tests/ops/fast/reduce_test.cpp — the fast sum of contiguous runs (ops/fast/reduce.cpp)
// against the reference loop, for sum and mean, and across thread counts.
#include "core/parallel.h"
#include "test_util.h"

namespace tg {
namespace {

std::vector<double> values_of(const Tensor& t) { return t.to(kFloat64).to_vector<double>(); }

TEST(FastSumTest, OverEverythingAgreesWithTheReference) {
  // The fast path adds 16 partial sums instead of one running total: the same terms in
  // another order, so the totals differ by rounding only, at most about n ulp of sum |x_i|
  // in the worst case and far less in practice; 1e-6 (float32, ulp 1.2e-7) and 1e-14
  // (float64) of sum |x_i| bound it for these sizes. A non-contiguous x, and sums over some
  // dims only, take the generic strided loop on both paths and must agree exactly.
  Generator gen(51);
  for (const DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-6 : 1e-14;
    for (const int64_t n : {1, 7, 129, 100003}) {
      const Tensor x = randn({n}, dt, gen);
      const double scale = values_of(sum(abs(x).to(kFloat64))).at(0);
      for (const bool is_mean : {false, true}) {
        auto total = [&](const Tensor& t) { return is_mean ? mean(t) : sum(t); };
        const double fast = values_of(total(x)).at(0);
        double reference = 0;
        {
          KernelPathGuard plain(KernelPath::kReference);
          reference = values_of(total(x)).at(0);
        }
        EXPECT_NEAR(fast, reference, tol * scale / (is_mean ? n : 1)) << dt << " n=" << n;
        for (const int threads : {1, 3}) {  // the blocks of a long run depend on n alone
          NumThreadsGuard guard(threads);
          EXPECT_EQ(values_of(total(x)).at(0), fast) << threads << " threads";
        }
      }
    }
  }
}

/// sum (or mean) over dims and its gradient for dout = w, on the fast or reference kernels.
std::pair<Tensor, Tensor> reduce_and_grad(const Tensor& x, const DimVec& dims, bool mean_of,
                                          bool plain) {
  KernelPathGuard path(testing::kernels_for(plain));
  const Tensor out = mean_of ? mean(x, dims) : sum(x, dims);
  return {out, grad({out}, {x}, {full(out.shape(), 0.75, out.dtype())})[0]};
}

TEST(FastSumTest, MatchesTheReference) {
  // The fast path adds a run in 16 lanes instead of left to right: each sum differs by a few
  // ulp of sum(|x|); 64 ulp of sum(|x|) leaves margin. The backward only copies values (and
  // divides by the same count), so the gradients agree exactly.
  Generator gen(11);
  const Shape shapes[] = {{1}, {7}, {129}, {3, 1}, {5, 129}, {2, 3, 7}, {4, 1030}};
  for (DType dtype : {kFloat32, kFloat64}) {
    const double eps = dtype == kFloat32 ? 1.2e-7 : 2.3e-16;
    for (const Shape& shape : shapes) {
      const Tensor x = randn(shape, dtype, gen).requires_grad_();
      const double abs_sum = sum(abs(x.detach())).to(kFloat64).item<double>();
      std::vector<DimVec> dim_lists = {{}, {-1}};
      if (shape.size() == 3) dim_lists.push_back({1, 2});
      if (shape.size() >= 2) dim_lists.push_back({0});  // not trailing: the generic loop
      for (const DimVec& dims : dim_lists) {
        for (bool mean_of : {false, true}) {
          SCOPED_TRACE(fmt::format("{} {} dims {} mean {}", dtype, shape, dims, mean_of));
          const auto [fast, fast_grad] = reduce_and_grad(x, dims, mean_of, false);
          const auto [ref, ref_grad] = reduce_and_grad(x, dims, mean_of, true);
          const std::vector<double> f = values_of(fast), r = values_of(ref);
          ASSERT_EQ(f.size(), r.size());
          for (size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(f[i], r[i], 64 * eps * abs_sum);
          EXPECT_EQ(values_of(fast_grad), values_of(ref_grad));
        }
      }
    }
  }
}

TEST(FastSumTest, LongRunsAreSummedInBlocksTheSameOnAnyThreadCount) {
  // A run longer than 16384 elements is summed in blocks of 16384, the block sums then added
  // in order; the blocks go to threads. Sizes around one and two blocks, a whole tensor (one
  // run) and several long runs (a sum over the last dim): every thread count gives the
  // 1-thread bits, and the total stays within 1e-6 of sum |x| of the float64 sum.
  Generator gen(13);
  for (const int64_t n : {16383, 16384, 16385, 32768, 32769, 100000}) {
    for (const int64_t rows : {1, 3}) {
      SCOPED_TRACE(fmt::format("{} runs of {}", rows, n));
      const Tensor x = randn({rows, n}, kFloat32, gen);
      std::vector<float> one;
      {
        NumThreadsGuard guard(1);
        one = sum(x, {-1}).to_vector<float>();
      }
      for (const int threads : {2, 3, 8}) {
        NumThreadsGuard guard(threads);
        EXPECT_EQ(sum(x, {-1}).to_vector<float>(), one) << threads << " threads";
      }
      const std::vector<double> exact = values_of(sum(x.to(kFloat64), {-1}));
      const std::vector<double> scale = values_of(sum(abs(x).to(kFloat64), {-1}));
      for (size_t r = 0; r < one.size(); ++r) EXPECT_NEAR(one[r], exact[r], 1e-6 * scale[r]);
    }
  }
}

TEST(FastSumTest, IsBitIdenticalForOneAndTwoThreads) {
  Generator gen(12);
  const Tensor x = randn({300, 1000}, kFloat32, gen).requires_grad_();
  std::pair<Tensor, Tensor> runs[2];
  for (int threads : {1, 2}) {
    NumThreadsGuard guard(threads);
    runs[threads - 1] = reduce_and_grad(x, {-1}, false, false);
  }
  EXPECT_EQ(runs[0].first.to_vector<float>(), runs[1].first.to_vector<float>());
  EXPECT_EQ(runs[0].second.to_vector<float>(), runs[1].second.to_vector<float>());
}

}  // namespace
}  // namespace tg
