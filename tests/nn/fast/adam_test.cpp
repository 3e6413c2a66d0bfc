// tests/nn/fast/adam_test.cpp — Adam(W)'s fast update kernel (nn/fast/adam.cpp) against the
// reference loop (nn/adam.cpp), and across thread counts.
#include <memory>
#include <vector>

#include "core/parallel.h"
#include "nn/optim.h"
#include "test_util.h"

namespace {

using tg::Tensor;
using tg::testing::as_doubles;

// Three steps of Adam (L2 decay) and AdamW (decoupled decay) on fresh copies of the same
// parameters and gradients; returns the parameters and the state after the last step.
std::vector<std::vector<double>> adam_run(bool adamw, tg::DType dtype, int64_t n) {
  tg::Generator gen(31);
  std::vector<Tensor> ps = {tg::randn({n}, dtype, gen).requires_grad_(),
                            tg::randn({3, n}, dtype, gen).requires_grad_()};
  std::vector<Tensor> grads;
  for (int rep = 0; rep < 3; ++rep) {
    for (const Tensor& p : ps) grads.push_back(tg::randn(p.shape(), dtype, gen));
  }
  std::unique_ptr<tg::nn::Optimizer> opt;
  if (adamw) opt = std::make_unique<tg::nn::AdamW>(ps, tg::nn::AdamWOptions{.weight_decay = 0.1});
  else opt = std::make_unique<tg::nn::Adam>(ps, tg::nn::AdamOptions{.weight_decay = 0.1});
  for (size_t i = 0; i < grads.size(); ++i) {
    ps[i % ps.size()].set_grad(grads[i]);
    if (i % ps.size() == ps.size() - 1) opt->step();
  }
  std::vector<std::vector<double>> out;
  for (const Tensor& p : ps) out.push_back(as_doubles(p));
  for (const auto& [name, t] : opt->state_tensors()) out.push_back(as_doubles(t));
  return out;
}

TEST(FastAdamTest, IsBitIdenticalToTheReferenceAndAcrossThreads) {
  // The fast kernel runs the very same per-element operations (fma, sqrt and division are
  // correctly rounded) on contiguous ranges split over threads: nothing may differ, not even
  // in the last bit. Sizes: 1, 7, 129 stay on one thread; 40000 is split.
  for (const tg::DType dtype : {tg::kFloat32, tg::kFloat64}) {
    for (const bool adamw : {false, true}) {
      for (const int64_t n : {1, 7, 129, 40000}) {
        std::vector<std::vector<double>> reference, one, two;
        {
          tg::KernelPathGuard plain(tg::KernelPath::kReference);
          reference = adam_run(adamw, dtype, n);
        }
        tg::KernelPathGuard fast(tg::KernelPath::kFast);
        {
          tg::NumThreadsGuard threads(1);
          one = adam_run(adamw, dtype, n);
        }
        {
          tg::NumThreadsGuard threads(2);
          two = adam_run(adamw, dtype, n);
        }
        EXPECT_EQ(one, reference) << dtype << (adamw ? " AdamW" : " Adam") << " n=" << n;
        EXPECT_EQ(two, reference) << dtype << (adamw ? " AdamW" : " Adam") << " n=" << n;
      }
    }
  }
}

}  // namespace
