// tests/ops/elementwise_test.cpp — the shared elementwise loops and argument checks.
//
// unary_map/binary_map have no backward of their own; the ops built on them are
// gradchecked and compared with PyTorch in their own tests. Here: the loops' indexing.
#include "ops/elementwise.h"

#include "test_util.h"

namespace {

using tg::Tensor;
using tg::testing::as_doubles;

TEST(ElementwiseTest, BinaryMapBroadcastsStridedOperands) {
  // a: a (2, 3) transposed view of a (3, 2) buffer; b: every other element of a row.
  const Tensor a = tg::arange(6.0, tg::kFloat64).view({3, 2}).t();
  const Tensor b = tg::tensor({10.0, -1.0, 20.0, -1.0, 30.0, -1.0}, {6}).slice(0, 0, 6, 2);
  const Tensor out =
      tg::detail::binary_map(a, b, "test", [](auto u, auto v) { return u * 100 + v; });
  EXPECT_EQ(out.shape(), (tg::Shape{2, 3}));
  EXPECT_TRUE(out.is_contiguous());
  EXPECT_EQ(as_doubles(out), (std::vector<double>{10, 220, 430, 110, 320, 530}));
}

TEST(ElementwiseTest, UnaryMapComputesInFloatAndRoundsOnce) {
  // 2049 is not a float16; computing 2048 + 1 in float then rounding once gives 2048,
  // and 2048 + 3 = 2051 rounds to 2052 (ties to even).
  const Tensor x = tg::tensor({2048.f, 2048.f}, {2}).to(tg::kFloat16);
  const Tensor one = tg::detail::unary_map(x, [](auto v) { return v + 1; });
  const Tensor three = tg::detail::unary_map(x, [](auto v) { return v + 3; });
  EXPECT_EQ(one.dtype(), tg::kFloat16);
  EXPECT_EQ(as_doubles(one), (std::vector<double>{2048, 2048}));
  EXPECT_EQ(as_doubles(three), (std::vector<double>{2052, 2052}));
}

TEST(ElementwiseTest, ChecksNameTheOpAndTheDtypes) {
  EXPECT_TG_THROW(tg::detail::check_floating(tg::tensor({1, 2}, {2}), "myop"), DTypeError, "myop",
                  "int64", "(2)");
  EXPECT_TG_THROW(tg::detail::check_same_dtype(tg::ones({2}), tg::ones({3}, tg::kFloat64), "myop"),
                  DTypeError, "myop", "float32", "(2)", "float64", "(3)");
  EXPECT_TG_THROW(tg::detail::binary_map(tg::ones({2}), tg::ones({3}), "myop",
                                         [](auto u, auto v) { return u + v; }),
                  ShapeError, "myop", "(2)", "(3)");
}

}  // namespace
