// tests/ops/fast/kernel_pairs_test.cpp — every op with a kernel pair (ops/kernels.h), run with
// its forward on one path and its backward on the other: all four mixes must give the values
// and gradients of the all-reference run. A backward that read what the forward saved in a
// layout only its own path writes (the forward's output, say) would fail here.
//
// (tests/ops/accumulate_test.cpp checks that a second backward adds into the existing .grad,
// on each path.)
#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;

struct PairCase {
  std::string name;
  /// The inputs, from a seeded generator; the ones to differentiate require grad.
  std::function<std::vector<Tensor>(Generator&)> inputs;
  /// The op's outputs.
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn;
};

Tensor normal(const Shape& shape, Generator& gen) {
  return randn(shape, kFloat64, gen).requires_grad_();
}

/// (B, H, T, D) query-like leaves split from (B, T, H, D) activations by a transpose, as a
/// model does: the fast forward then stores its output in that layout too.
Tensor heads(int64_t b, int64_t h, int64_t t, int64_t d, Generator& gen) {
  return randn({b, t, h, d}, kFloat64, gen).transpose(1, 2).requires_grad_();
}

std::vector<PairCase> pair_cases() {
  auto one = [](Tensor t) { return std::vector<Tensor>{t}; };
  return {
      {"linear",
       [](Generator& g) {
         return std::vector<Tensor>{normal({2, 5, 7}, g), normal({3, 7}, g), normal({3}, g)};
       },
       [=](const auto& in) { return one(linear(in[0], in[1], in[2])); }},
      {"relu",
       [](Generator& g) {
         return std::vector<Tensor>{normal({4, 33}, g)};
       },
       [=](const auto& in) { return one(relu(in[0])); }},
      {"silu",
       [](Generator& g) {
         return std::vector<Tensor>{normal({4, 33}, g)};
       },
       [=](const auto& in) { return one(silu(in[0])); }},
      {"swiglu",
       [](Generator& g) {
         return std::vector<Tensor>{normal({3, 19}, g), normal({3, 19}, g)};
       },
       [=](const auto& in) { return one(swiglu(in[0], in[1])); }},
      {"silu_and_mul",
       [](Generator& g) {
         return std::vector<Tensor>{normal({3, 2, 38}, g)};
       },
       [=](const auto& in) { return one(silu_and_mul(in[0])); }},
      {"rms_norm",
       [](Generator& g) {
         return std::vector<Tensor>{normal({6, 40}, g), normal({40}, g)};
       },
       [=](const auto& in) { return one(rms_norm(in[0], in[1])); }},
      {"add_rms_norm",
       [](Generator& g) {
         return std::vector<Tensor>{normal({6, 40}, g), normal({6, 40}, g), normal({40}, g)};
       },
       [](const auto& in) {
         const AddRmsNormOutput o = add_rms_norm(in[0], in[1], in[2]);
         return std::vector<Tensor>{o.out, o.residual};
       }},
      {"cross_entropy",
       [](Generator& g) {
         return std::vector<Tensor>{normal({9, 21}, g), randint(0, 21, {9}, kInt64, g)};
       },
       [=](const auto& in) { return one(cross_entropy(in[0], in[1], {.label_smoothing = 0.1})); }},
      {"embedding",
       [](Generator& g) {
         return std::vector<Tensor>{randint(0, 11, {4, 6}, kInt64, g), normal({11, 9}, g)};
       },
       [=](const auto& in) { return one(embedding(in[0], in[1], 2)); }},
      {"attention (causal, heads split by a transpose)",
       [](Generator& g) {
         return std::vector<Tensor>{heads(2, 3, 70, 8, g), heads(2, 3, 70, 8, g),
                                    heads(2, 3, 70, 8, g)};
       },
       [=](const auto& in) {
         return one(scaled_dot_product_attention(in[0], in[1], in[2], {}, true));
       }},
      {"attention (float mask with a gradient)",
       [](Generator& g) {
         return std::vector<Tensor>{normal({1, 2, 5, 4}, g), normal({1, 2, 7, 4}, g),
                                    normal({1, 2, 7, 3}, g), normal({5, 7}, g)};
       },
       [=](const auto& in) {
         return one(scaled_dot_product_attention(in[0], in[1], in[2], in[3]));
       }},
      {"matmul (batched, broadcast, transposed)",
       [](Generator& g) {
         return std::vector<Tensor>{
             normal({2, 1, 5, 6}, g),
             randn({3, 4, 6}, kFloat64, g).transpose(-1, -2).requires_grad_()};
       },
       [=](const auto& in) { return one(matmul(in[0], in[1])); }},
      {"sum and mean over the last dims",
       [](Generator& g) {
         return std::vector<Tensor>{normal({3, 4, 35}, g)};
       },
       [](const auto& in) {
         return std::vector<Tensor>{sum(in[0], {-1}), mean(in[0], {1, 2}), sum(in[0])};
       }},
  };
}

/// The outputs, then the gradients of every input that requires grad, for fixed upstream
/// gradients: the forward on `fwd`, the backward on `bwd`.
std::vector<Tensor> run(const PairCase& c, KernelPath fwd, KernelPath bwd) {
  Generator gen(7);
  const std::vector<Tensor> in = c.inputs(gen);
  std::vector<Tensor> outs;
  {
    KernelPathGuard path(fwd);
    outs = c.fn(in);
  }
  std::vector<Tensor> gouts, wrt;
  for (const Tensor& o : outs) gouts.push_back(randn(o.shape(), o.dtype(), gen));
  for (const Tensor& t : in) {
    if (t.requires_grad()) wrt.push_back(t);
  }
  std::vector<Tensor> result;
  for (const Tensor& o : outs) result.push_back(o.detach());
  KernelPathGuard path(bwd);
  for (const Tensor& g : grad(outs, wrt, gouts)) result.push_back(g);
  return result;
}

/// |got - want| <= 1e-11 * (1 + max|want|): float64 sums taken in another order.
void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape()) << what << ", result " << i;
    const std::vector<double> g = as_doubles(got[i]), w = as_doubles(want[i]);
    double scale = 1;
    for (double v : w) scale = std::max(scale, std::abs(v));
    for (size_t e = 0; e < g.size(); ++e) {
      ASSERT_NEAR(g[e], w[e], 1e-11 * scale) << what << ", result " << i << ", element " << e;
    }
  }
}

TEST(KernelPairs, EveryMixOfForwardAndBackwardPathsAgrees) {
  constexpr KernelPath kRef = KernelPath::kReference, kFast = KernelPath::kFast;
  for (const PairCase& c : pair_cases()) {
    const std::vector<Tensor> reference = run(c, kRef, kRef);
    expect_close(run(c, kFast, kFast), reference, c.name + ": fast forward, fast backward");
    expect_close(run(c, kFast, kRef), reference, c.name + ": fast forward, reference backward");
    expect_close(run(c, kRef, kFast), reference, c.name + ": reference forward, fast backward");
  }
}

}  // namespace
}  // namespace tg
