// tests/ops/fast/embedding_test.cpp — embedding's fast kernels (ops/fast/embedding.cpp)
// against the reference kernels, across thread counts, and adding into an existing .grad.
#include "core/parallel.h"
#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;
using testing::grad_of;

/// Output and d(sum(out * w))/d(table), on the fast or the reference kernels.
std::pair<Tensor, Tensor> lookup_and_grad(const Tensor& ids, const Tensor& table,
                                          std::optional<int64_t> padding_idx, const Tensor& w,
                                          bool plain) {
  KernelPathGuard path(testing::kernels_for(plain));
  const Tensor out = embedding(ids, table, padding_idx);
  return {out, grad_of(out, table, w)};
}

TEST(FastEmbeddingTest, MatchTheReferenceExactly) {
  // The forward copies rows; the backward adds each row's gradient rows in id order, as the
  // plain loop does, so both paths agree exactly (not merely within a tolerance).
  Generator gen(3);
  const int64_t shapes[][3] = {{1, 1, 1}, {7, 129, 40}, {129, 7, 300}, {50, 33, 7}};
  for (DType dtype : {kFloat32, kFloat64, kBFloat16}) {
    for (const auto& [V, D, N] : shapes) {
      for (std::optional<int64_t> pad : {std::optional<int64_t>(), std::optional<int64_t>(0)}) {
        SCOPED_TRACE(fmt::format("{} V={} D={} N={} pad={}", dtype, V, D, N, pad.has_value()));
        const Tensor table = randn({V, D}, kFloat32, gen).to(dtype).requires_grad_();
        // Few rows, many ids: most rows get several gradient rows; ids 2-D and transposed.
        const Tensor ids = randint(0, V, {N, 2}, kInt64, gen).t();
        const Tensor w = randn({2, N, D}, kFloat32, gen).to(dtype);
        const auto [fast_out, fast_grad] = lookup_and_grad(ids, table, pad, w, false);
        const auto [ref_out, ref_grad] = lookup_and_grad(ids, table, pad, w, true);
        EXPECT_EQ(as_doubles(fast_out), as_doubles(ref_out));
        EXPECT_EQ(as_doubles(fast_grad), as_doubles(ref_grad));
      }
    }
  }
}

TEST(FastEmbeddingTest, AreBitIdenticalForAnyThreadCount) {
  // Many rows with few ids each, and the tiny LM's few rows with 16 ids each (which the
  // backward shares between threads by the ids' work, not the rows' count).
  Generator gen(4);
  const int64_t shapes[][3] = {{3000, 70, 20000}, {128, 128, 2048}};
  for (const auto& [V, D, N] : shapes) {
    SCOPED_TRACE(fmt::format("V={} D={} N={}", V, D, N));
    const Tensor table = randn({V, D}, kFloat32, gen).requires_grad_();
    const Tensor ids = randint(0, V, {N}, kInt64, gen);
    const Tensor w = randn({N, D}, kFloat32, gen);
    std::pair<Tensor, Tensor> one;
    {
      NumThreadsGuard guard(1);
      one = lookup_and_grad(ids, table, 5, w, false);
    }
    for (int threads : {2, 3, 8}) {
      NumThreadsGuard guard(threads);
      const auto [out, dtable] = lookup_and_grad(ids, table, 5, w, false);
      EXPECT_EQ(out.to_vector<float>(), one.first.to_vector<float>()) << threads << " threads";
      EXPECT_EQ(dtable.to_vector<float>(), one.second.to_vector<float>()) << threads << " threads";
    }
  }
}

TEST(FastEmbeddingTest, AddingIntoAnExistingGradMatchesAddingAFreshOne) {
  // The second backward adds the row sums straight into table.grad (touching only the rows
  // the ids hit); the result must be bit for bit the fresh gradient added to the old one.
  Generator gen(5);
  for (DType dtype : {kFloat32, kFloat64}) {
    const Tensor table = randn({40, 19}, dtype, gen).requires_grad_();
    const Tensor ids = randint(0, 40, {3, 50}, kInt64, gen);
    const Tensor w = randn({3, 50, 19}, dtype, gen);
    const Tensor g = grad_of(embedding(ids, table, 2), table, w);
    backward(embedding(ids, table, 2), w);
    backward(embedding(ids, table, 2), w);
    EXPECT_EQ(as_doubles(table.grad()), as_doubles(add(g, g)));
  }
}

}  // namespace
}  // namespace tg
