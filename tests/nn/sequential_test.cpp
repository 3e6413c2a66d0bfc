// tests/nn/sequential_test.cpp — Sequential and MLP: chaining, PyTorch names, printing.
#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn {
namespace {

using ::testing::ElementsAre;
using tg::testing::as_doubles;

TEST(SequentialTest, ChainsLayersInOrderWithPositionalNames) {
  Generator gen(0);
  Sequential seq(std::make_unique<Linear>(3, 4, LinearOptions{}, gen), std::make_unique<ReLU>());
  Linear& last = seq.emplace_back<Linear>(4, 2, LinearOptions{.bias = false}, gen);
  EXPECT_EQ(seq.size(), 3u);
  EXPECT_EQ(&seq[2], &last);
  EXPECT_THAT(seq.state_dict().keys(), ElementsAre("0.weight", "0.bias", "2.weight"));
  const Tensor x = randn({5, 3}, kFloat32, gen);
  const Linear& first = dynamic_cast<const Linear&>(seq[0]);
  const Tensor expected = linear(relu(linear(x, first.weight, first.bias)), last.weight);
  EXPECT_EQ(as_doubles(seq(x)), as_doubles(expected));
  int n = 0;
  for (const auto& layer : seq) n += layer->num_parameters() > 0;
  EXPECT_EQ(n, 2);
}

TEST(SequentialTest, EmptySequentialIsTheIdentity) {
  Sequential seq;
  const Tensor x = ones({2});
  EXPECT_EQ(seq(x).impl(), x.impl());
  EXPECT_EQ(seq.to_string(), "Sequential()  # 0 parameters");
}

TEST(SequentialTest, EvalReachesDropoutInside) {
  Generator gen(1);
  Sequential seq(std::make_unique<Dropout>(0.5, gen));
  const Tensor x = ones({100});
  EXPECT_NE(as_doubles(seq(x)), as_doubles(x));
  seq.eval();
  EXPECT_EQ(as_doubles(seq(x)), as_doubles(x));
}

TEST(SequentialTest, MLPIsASequentialWithTorchSequentialNames) {
  MLP mlp({784, 256, 128, 10});
  EXPECT_THAT(mlp.state_dict().keys(),
              ElementsAre("0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"));
  EXPECT_EQ(mlp.num_parameters(), 235146);
  EXPECT_EQ(mlp.to_string(),
            "MLP(\n"
            "  (0): Linear(in_features=784, out_features=256, bias=True)\n"
            "  (1): ReLU()\n"
            "  (2): Linear(in_features=256, out_features=128, bias=True)\n"
            "  (3): ReLU()\n"
            "  (4): Linear(in_features=128, out_features=10, bias=True)\n"
            ")  # 235,146 parameters");
}

TEST(SequentialTest, MLPOptionsAndForward) {
  Generator g1(2), g2(2);
  MLP mlp({3, 5, 2}, {.activation = Activation::kSiLU, .bias = false, .dtype = kFloat64}, g1);
  // Same generator order as building the Linear layers by hand.
  Linear l0(3, 5, {.bias = false, .dtype = kFloat64}, g2);
  Linear l2(5, 2, {.bias = false, .dtype = kFloat64}, g2);
  EXPECT_THAT(mlp.state_dict().keys(), ElementsAre("0.weight", "2.weight"));
  EXPECT_EQ(mlp[1].type_name(), "SiLU");
  const Tensor x = randn({4, 3}, kFloat64, g2);
  EXPECT_EQ(as_doubles(mlp(x)), as_doubles(l2(silu(l0(x)))));
  MLP gelu_mlp({2, 2, 2, 2}, {.activation = Activation::kGELU});
  EXPECT_EQ(gelu_mlp[3].to_string(), "GELU(approximate='none')  # 0 parameters");
  EXPECT_EQ(gelu_mlp.size(), 5u);
  MLP single({4, 1});
  EXPECT_EQ(single.size(), 1u);
}

TEST(SequentialTest, MLPLoadsWeightsExportedUnderTorchNames) {
  // What tests/reference/generate.py writes for torch.nn.Sequential(Linear, ReLU, Linear).
  StateDict sd;
  sd.insert("0.weight", tensor({1.0, -1.0, 0.5, 2.0}, {2, 2}));
  sd.insert("0.bias", tensor({0.0, -1.0}));
  sd.insert("2.weight", tensor({1.0, 1.0}, {1, 2}));
  sd.insert("2.bias", tensor({0.25}));
  MLP mlp({2, 2, 1});
  mlp.load_state_dict(sd);
  // x = (1, 2): h = relu((1 - 2, 0.5 + 4 - 1)) = (0, 3.5); y = 3.5 + 0.25.
  EXPECT_EQ(as_doubles(mlp(tensor({1.f, 2.f}, {1, 2}))), (std::vector<double>{3.75}));
}

TEST(SequentialTest, Errors) {
  EXPECT_TG_THROW(MLP({4}), ValueError, "MLP", "1 entries");
  EXPECT_TG_THROW(MLP({4, 0, 2}), ValueError, "MLP", "4, 0, 2");
  Sequential seq;
  EXPECT_TG_THROW(seq.push_back(nullptr), ValueError, "Sequential::push_back", "null");
  EXPECT_TG_THROW(seq[0], IndexError, "Sequential", "index 0", "0 layers");
  MLP mlp({2, 3});
  EXPECT_TG_THROW(mlp[1], IndexError, "MLP", "index 1", "1 layers");
}

}  // namespace
}  // namespace tg::nn
