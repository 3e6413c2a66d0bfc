// tests/nn/activation_test.cpp — ReLU, SiLU, GELU and Dropout modules.
#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn {
namespace {

using tg::testing::as_doubles;

TEST(ActivationTest, ModulesEqualTheirOps) {
  const Tensor x = tensor({-2.0, -0.5, 0.0, 0.5, 3.0});
  EXPECT_EQ(as_doubles(ReLU()(x)), (std::vector<double>{0, 0, 0, 0.5, 3}));
  EXPECT_EQ(as_doubles(SiLU()(x)), as_doubles(silu(x)));
  EXPECT_EQ(as_doubles(GELU()(x)), as_doubles(gelu(x, false)));
  EXPECT_EQ(as_doubles(GELU({.approximate = true})(x)), as_doubles(gelu(x, true)));
  EXPECT_NE(as_doubles(GELU({.approximate = true})(x)), as_doubles(gelu(x, false)));
}

TEST(ActivationTest, PrintLikePyTorch) {
  EXPECT_EQ(ReLU().to_string(), "ReLU()  # 0 parameters");
  EXPECT_EQ(SiLU().to_string(), "SiLU()  # 0 parameters");
  EXPECT_EQ(GELU().extra_repr(), "approximate='none'");
  EXPECT_EQ(GELU({.approximate = true}).extra_repr(), "approximate='tanh'");
  EXPECT_EQ(Dropout(0.1).extra_repr(), "p=0.1");
  EXPECT_TRUE(ReLU().parameters().empty());
}

TEST(ActivationTest, DropoutUsesTrainingModeAndItsGenerator) {
  Generator gen(4), ref(4);
  Dropout drop(0.5, gen);
  const Tensor x = ones({1000});
  const Tensor y = drop(x);
  EXPECT_EQ(as_doubles(y), as_doubles(dropout(x, 0.5, true, ref)));
  int zeros_seen = 0;
  for (double v : as_doubles(y)) {
    EXPECT_TRUE(v == 0.0 || v == 2.0);
    zeros_seen += v == 0.0;
  }
  EXPECT_NEAR(zeros_seen, 500, 80);  // 5 standard deviations of Binomial(1000, 0.5)
  drop.eval();
  const uint64_t offset = gen.offset();
  const Tensor z = drop(x);
  EXPECT_EQ(z.impl(), x.impl());    // the same tensor, as PyTorch
  EXPECT_EQ(gen.offset(), offset);  // and nothing drawn
  drop.train();
  EXPECT_NE(as_doubles(drop(x)), as_doubles(y));  // the stream moved on
}

TEST(ActivationTest, Errors) {
  EXPECT_TG_THROW(Dropout(1.5), ValueError, "Dropout", "1.5");
  EXPECT_TG_THROW(Dropout(-0.1), ValueError, "Dropout", "-0.1");
  EXPECT_TG_THROW(ReLU()(Tensor()), MisuseError, "undefined");
}

}  // namespace
}  // namespace tg::nn
