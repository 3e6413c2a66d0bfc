// tests/ops/accumulate_test.cpp — a second backward adds into the existing .grad.
//
// When an input is a leaf whose .grad already exists, the engine hands that .grad to the
// op's backward to add into (Context::grad_buffer, the write rule of ops/kernels.h): the
// kernel must add, not overwrite. For every op whose backward takes its buffers that way,
// two backward passes give twice the gradient of one. (CTest runs this on both kernel paths;
// in a student tree, on the learner's reference kernels.)
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;

struct Case {
  std::string name;  // the test's name too: letters, digits, '_'

  /// The inputs, from a seeded generator; the ones to differentiate require grad.
  std::function<std::vector<Tensor>(Generator&)> inputs;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn;
};

Tensor leaf(const Shape& shape, Generator& gen) {
  return randn(shape, kFloat64, gen).requires_grad_();
}

std::vector<Case> cases() {
  auto one = [](Tensor t) { return std::vector<Tensor>{t}; };
  auto unary = [&](std::string name, std::function<Tensor(const Tensor&)> f) {
    return Case{std::move(name),
                [](Generator& g) {
                  return std::vector<Tensor>{leaf({3, 17}, g)};
                },
                [=](const std::vector<Tensor>& in) { return one(f(in[0])); }};
  };
  return {
      {"linear",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({4, 6}, g), leaf({3, 6}, g), leaf({3}, g)};
       },
       [=](const auto& in) { return one(linear(in[0], in[1], in[2])); }},
      unary("relu", [](const Tensor& x) { return relu(x); }),
      unary("sigmoid", [](const Tensor& x) { return sigmoid(x); }),
      unary("tanh", [](const Tensor& x) { return tg::tanh(x); }),
      unary("silu", [](const Tensor& x) { return silu(x); }),
      unary("gelu", [](const Tensor& x) { return gelu(x); }),
      unary("silu_and_mul", [](const Tensor& x) { return silu_and_mul(x.narrow(1, 0, 16)); }),
      unary("softmax", [](const Tensor& x) { return softmax(x, 1); }),
      unary("log_softmax", [](const Tensor& x) { return log_softmax(x, 0); }),
      unary("max_dim", [](const Tensor& x) { return max(x, 1).values; }),
      {"swiglu",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({3, 7}, g), leaf({3, 7}, g)};
       },
       [=](const auto& in) { return one(swiglu(in[0], in[1])); }},
      {"rms_norm",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({5, 8}, g), leaf({8}, g)};
       },
       [=](const auto& in) { return one(rms_norm(in[0], in[1])); }},
      {"add_rms_norm",
       [](Generator& g) {
         return std::vector<Tensor>{randn({5, 8}, kFloat64, g), randn({5, 8}, kFloat64, g),
                                    leaf({8}, g)};
       },
       [](const auto& in) {
         const AddRmsNormOutput o = add_rms_norm(in[0], in[1], in[2]);
         return std::vector<Tensor>{o.out, o.residual};
       }},
      {"layer_norm",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({5, 8}, g), leaf({8}, g), leaf({8}, g)};
       },
       [=](const auto& in) { return one(layer_norm(in[0], in[1], in[2])); }},
      {"cross_entropy",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({6, 9}, g), randint(0, 9, {6}, kInt64, g)};
       },
       [=](const auto& in) { return one(cross_entropy(in[0], in[1], {.label_smoothing = 0.1})); }},
      {"embedding",
       [](Generator& g) {
         return std::vector<Tensor>{randint(0, 7, {3, 5}, kInt64, g), leaf({7, 4}, g)};
       },
       [=](const auto& in) { return one(embedding(in[0], in[1], 1)); }},
      {"attention",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({1, 2, 5, 4}, g), leaf({1, 2, 5, 4}, g),
                                    leaf({1, 2, 5, 3}, g)};
       },
       [=](const auto& in) {
         return one(scaled_dot_product_attention(in[0], in[1], in[2], {}, true));
       }},
      {"dropout",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({4, 25}, g)};
       },
       [=](const auto& in) {
         Generator mask(3);  // the same mask on every call
         return one(dropout(in[0], 0.4, true, mask));
       }},
      {"rope",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({2, 3, 8}, g)};
       },
       [=](const auto& in) { return one(rope(in[0], arange(3.0, kInt64))); }},
      {"mse_loss",
       [](Generator& g) {
         return std::vector<Tensor>{leaf({4, 3}, g), leaf({4, 3}, g)};
       },
       [=](const auto& in) { return one(mse_loss(in[0], in[1])); }},
  };
}

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

// One test per op, so that each is tied to its own exercise (tests/exercise_ties.txt).
class AccumulateTest : public ::testing::TestWithParam<Case> {};

TEST_P(AccumulateTest, ASecondBackwardAddsIntoTheExistingGrad) {
  const Case& c = GetParam();
  Generator gen(9);
  const std::vector<Tensor> in = c.inputs(gen);
  std::vector<Tensor> wrt;
  for (const Tensor& t : in) {
    if (t.requires_grad()) wrt.push_back(t);
  }
  auto loss = [&] {  // sum over the outputs of sum(out * a fixed weight)
    Generator weights(10);
    Tensor total = zeros({}, kFloat64);
    for (const Tensor& o : c.fn(in)) {
      total = add(total, sum(mul(o, randn(o.shape(), o.dtype(), weights))));
    }
    return total;
  };
  const std::vector<Tensor> once = grad({loss()}, wrt);
  loss().backward();
  loss().backward();
  for (size_t i = 0; i < wrt.size(); ++i) {
    const std::vector<double> got = as_doubles(wrt[i].grad());
    const std::vector<double> want = as_doubles(mul(once[i], 2.0));
    ASSERT_EQ(got.size(), want.size());
    for (size_t e = 0; e < got.size(); ++e) {
      EXPECT_NEAR(got[e], want[e], 1e-12 * (1 + std::abs(want[e])))
          << "input " << i << ", element " << e
          << ": the second backward must add into the .grad the first one left";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, AccumulateTest, ::testing::ValuesIn(cases()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace tg
