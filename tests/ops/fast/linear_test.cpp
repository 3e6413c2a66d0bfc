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
