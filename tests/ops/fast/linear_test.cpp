// tests/ops/fast/linear_test.cpp — linear's fast kernels (ops/fast/linear.cpp): a second
// backward adds into the existing .grads through the GEMM's beta = 1, bit for bit.
#include "test_util.h"

namespace {

using tg::Tensor;
using tg::testing::as_doubles;

TEST(FastLinearTest, AddingIntoExistingGradsMatchesAddingFreshOnes) {
  // The second backward adds straight into x.grad, W.grad and b.grad (gemm with beta = 1,
  // Context::grad_buffer). With the sums over n_rows and out inside one KC block of the
  // GEMM, that is bit for bit .grad + the fresh gradient. The memory of each .grad is kept.
  tg::Generator gen(12);
  for (tg::DType dtype : {tg::kFloat32, tg::kFloat64}) {
    const Tensor x = tg::randn({37, 65}, dtype, gen).requires_grad_();
    const Tensor w = tg::randn({29, 65}, dtype, gen).requires_grad_();
    const Tensor b = tg::randn({29}, dtype, gen).requires_grad_();
    const Tensor dy = tg::randn({37, 29}, dtype, gen);
    const auto fresh = tg::grad({tg::linear(x, w, b)}, {x, w, b}, {dy});
    tg::linear(x, w, b).backward(dy);
    const void* memory[] = {x.grad().raw_data(), w.grad().raw_data(), b.grad().raw_data()};
    tg::linear(x, w, b).backward(dy);
    const Tensor* leaves[] = {&x, &w, &b};
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(as_doubles(leaves[i]->grad()), as_doubles(tg::add(fresh[i], fresh[i])))
          << tg::dtype_name(dtype) << " input " << i;
      EXPECT_EQ(leaves[i]->grad().raw_data(), memory[i]) << "input " << i;
    }
  }
}

}  // namespace

namespace {

// bfloat16 x and W: the fast kernels multiply them as they are (ops/fast/gemm.h's bfloat16
// GEMM), the reference widens them and runs the float32 kernels. Both sum the same exact
// products in float32, in different orders, so each float32 result is within
// gamma_k * sum |a||b| of the exact sum (k = the length of the sum); rounded once to
// bfloat16, the two may land on neighbouring values. Checked: every output and gradient
// within one bfloat16 unit of the reference's, plus twice that sum bound.
void expect_near_bf16(const Tensor& fast, const Tensor& reference, const Tensor& bound,
                      const char* what) {
  ASSERT_EQ(fast.dtype(), tg::kBFloat16) << what;
  const std::vector<double> f = as_doubles(fast), r = as_doubles(reference);
  const std::vector<double> s = as_doubles(bound);
  int bad = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    const double tol = std::ldexp(std::abs(r[i]), -7) + 2 * s[i];
    if (!(std::abs(f[i] - r[i]) <= tol) && bad++ < 3) {
      ADD_FAILURE() << what << " element " << i << ": fast " << f[i] << ", reference " << r[i]
                    << ", tolerance " << tol;
    }
  }
}

TEST(FastLinearTest, BFloat16MatchesTheWideningReference) {
  tg::Generator gen(5);
  const int64_t n = 37, in = 130, out = 29;  // odd sizes: k-pairs with a zero pad, edge tiles
  const Tensor x = tg::randn({n, in}, tg::kFloat32, gen).to(tg::kBFloat16).requires_grad_();
  const Tensor w = tg::randn({out, in}, tg::kFloat32, gen).to(tg::kBFloat16).requires_grad_();
  const Tensor b = tg::randn({out}, tg::kFloat32, gen).to(tg::kBFloat16).requires_grad_();
  const Tensor dy = tg::randn({n, out}, tg::kFloat32, gen).to(tg::kBFloat16);
  auto run = [&](tg::KernelPath path) {
    tg::KernelPathGuard guard(path);
    std::vector<Tensor> r = {tg::linear(x, w, b)};
    for (const Tensor& g : tg::grad({r[0]}, {x, w, b}, {dy})) r.push_back(g);
    return r;
  };
  const auto fast = run(tg::KernelPath::kFast), ref = run(tg::KernelPath::kReference);
  // gamma_k * sum |a||b| for each result, from the absolute values in float64.
  const double u = std::ldexp(1.0, -24);
  auto bound = [&](const Tensor& a, const Tensor& bt, int64_t k) {
    const Tensor p =
        tg::matmul(tg::abs(a.detach().to(tg::kFloat64)), tg::abs(bt.detach().to(tg::kFloat64)));
    return tg::mul(p, k * u / (1 - k * u));
  };
  expect_near_bf16(fast[0], ref[0],
                   tg::add(bound(x, w.t(), in), tg::abs(b.detach().to(tg::kFloat64))), "y");
  expect_near_bf16(fast[1], ref[1], bound(dy, w, out), "dx");
  expect_near_bf16(fast[2], ref[2], bound(dy.t(), x, n), "dW");
  expect_near_bf16(fast[3], ref[3], tg::mul(tg::sum(tg::abs(dy.to(tg::kFloat64)), {0}), n * u),
                   "db");
}

TEST(FastLinearTest, BFloat16FastPathReallyRuns) {
  // On the fast path a bfloat16 linear must use the bfloat16 kernels, not widen: the kernel
  // pair is installed, and the reference path has none.
  ASSERT_NE(tg::kernels::linear_forward_bf16.fast(), nullptr);
  ASSERT_NE(tg::kernels::linear_backward_bf16.fast(), nullptr);
  tg::KernelPathGuard guard(tg::KernelPath::kReference);
  EXPECT_EQ(tg::kernels::linear_forward_bf16.get(), nullptr);
}

}  // namespace
