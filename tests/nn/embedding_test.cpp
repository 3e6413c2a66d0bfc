// tests/nn/embedding_test.cpp — Embedding: N(0, 1) init, the zero padding row, forward.
#include <cmath>

#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn {
namespace {

using tg::testing::as_doubles;

TEST(EmbeddingTest, ForwardEqualsTheEmbeddingOp) {
  Generator gen(0);
  Embedding emb(10, 4, {}, gen);
  const Tensor ids = tensor({1, 7, 7, 0, 9, 3}, {2, 3});
  const Tensor y = emb(ids);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(as_doubles(y), as_doubles(embedding(ids, emb.weight)));
  // Row 7 of the table at position (0, 1).
  EXPECT_EQ(as_doubles(y.select(0, 0).select(0, 1)), as_doubles(emb.weight.select(0, 7)));
}

TEST(EmbeddingTest, InitIsStandardNormalFromTheGenerator) {
  Generator g1(1), g2(1);
  Embedding emb(1000, 64, {}, g1);
  const std::vector<double> v = as_doubles(emb.weight);
  double s = 0, s2 = 0;
  for (double x : v) {
    s += x;
    s2 += x * x;
  }
  const double n = static_cast<double>(v.size());
  EXPECT_NEAR(s / n, 0.0, 5 / std::sqrt(n));  // 5 standard errors
  EXPECT_NEAR(std::sqrt(s2 / n), 1.0, 5 / std::sqrt(2 * n));
  EXPECT_EQ(as_doubles(emb.weight), as_doubles(init::normal_(empty({1000, 64}), 0, 1, g2)));
}

TEST(EmbeddingTest, PaddingRowStartsAtZeroAndGetsNoGradient) {
  Generator gen(2);
  Embedding emb(5, 3, {.padding_idx = 2}, gen);
  EXPECT_EQ(emb.padding_idx, 2);
  for (int64_t r = 0; r < 5; ++r) {
    const std::vector<double> row = as_doubles(emb.weight.select(0, r));
    if (r == 2) {
      EXPECT_EQ(row, std::vector<double>(3, 0.0));
    } else {
      EXPECT_NE(row, std::vector<double>(3, 0.0)) << r;
    }
  }
  EXPECT_TRUE(emb.weight.is_leaf());
  sum(emb(tensor({2, 1, 2}, {3}))).backward();
  const std::vector<double> g = as_doubles(emb.weight.grad());
  EXPECT_EQ(std::vector<double>(g.begin() + 6, g.begin() + 9), std::vector<double>(3, 0.0));
  EXPECT_EQ(std::vector<double>(g.begin() + 3, g.begin() + 6), std::vector<double>(3, 1.0));
}

TEST(EmbeddingTest, NegativePaddingIndexCountsFromTheEnd) {
  Embedding emb(10, 3, {.padding_idx = -1});
  EXPECT_EQ(emb.padding_idx, 9);  // as PyTorch stores it
  EXPECT_EQ(as_doubles(emb.weight.select(0, 9)), std::vector<double>(3, 0.0));
  EXPECT_EQ(emb.to_string(), "Embedding(10, 3, padding_idx=9)  # 30 parameters");
  EXPECT_EQ(Embedding(7, 2).extra_repr(), "7, 2");
}

TEST(EmbeddingTest, DtypeOption) {
  Embedding emb(4, 2, {.dtype = kBFloat16});
  EXPECT_EQ(emb.weight.dtype(), kBFloat16);
  EXPECT_EQ(emb(tensor({3}, {1})).dtype(), kBFloat16);
}

TEST(EmbeddingTest, Errors) {
  EXPECT_TG_THROW(Embedding(0, 3), ValueError, "Embedding", "num_embeddings (0)");
  EXPECT_TG_THROW(Embedding(3, 0), ValueError, "Embedding", "embedding_dim (0)");
  EXPECT_TG_THROW(Embedding(3, 2, {.padding_idx = 3}), IndexError, "Embedding", "padding_idx 3",
                  "num_embeddings 3");
  EXPECT_TG_THROW(Embedding(3, 2, {.padding_idx = -4}), IndexError, "padding_idx -4");
  EXPECT_TG_THROW(Embedding(3, 2, {.dtype = kInt64}), DTypeError, "Embedding", "int64");
  Embedding emb(3, 2);
  EXPECT_TG_THROW(emb(tensor({3}, {1})), IndexError, "embedding", "3");
}

}  // namespace
}  // namespace tg::nn
