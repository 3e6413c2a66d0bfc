// tests/ops/elementwise_test.cpp — the shared elementwise loops and argument checks.
//
// unary_map/binary_map have no backward of their own; the ops built on them are
// gradchecked and compared with PyTorch in their own tests. Here: the loops' indexing.
#include "ops/elementwise.h"

#include <cmath>
#include <vector>

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

// ---------------------------------------------------------------- the flat loop
// unary_map and binary_map on contiguous float32/float64 operands of the output's shape,
// or with a single-element operand, run a flat loop split over threads. It calls f on the
// same values as the strided loop, element by element, so results must agree bit for bit
// with the strided loop and for any thread count.

/// The values of t in a non-contiguous view (every other element of a buffer twice as long):
/// the maps walk it with the strided loop.
Tensor strided(const Tensor& t) { return tg::stack({t, t}, -1).select(-1, 0); }

/// Each result the maps give for operands of n elements in dtype dt: unary, binary, scalar
/// on either side, a transposed (non-contiguous) operand, and a row broadcast. With
/// `via_strides`, x and y are strided views of the same values.
std::vector<std::vector<double>> map_results(tg::DType dt, int64_t n, bool via_strides = false) {
  tg::Generator gen(41);
  Tensor x = tg::randn({n}, dt, gen), y = tg::randn({n}, dt, gen);
  if (via_strides) x = strided(x), y = strided(y);
  const Tensor s = tg::randn({}, dt, gen), one = tg::randn({1}, dt, gen);
  const Tensor m = tg::randn({3, n}, dt, gen), mt = tg::randn({n, 3}, dt, gen).t();
  auto f = [](auto u, auto v) { return u * v + u / (v + 3); };
  std::vector<Tensor> r = {
      tg::detail::unary_map(x, [](auto v) { return std::exp(v) * v + 1; }),
      tg::detail::binary_map(x, y, "test", f),
      tg::detail::binary_map(x, s, "test", f),
      tg::detail::binary_map(one, y, "test", f),
      tg::detail::binary_map(s, one, "test", f),
      tg::detail::binary_map(m, mt, "test", f),  // strided: the reference loop either way
      tg::detail::binary_map(m, x, "test", f),   // a broadcast row: the reference loop too
  };
  std::vector<std::vector<double>> out;
  for (const Tensor& t : r) out.push_back(as_doubles(t));
  return out;
}

TEST(ElementwiseTest, FlatLoopIsBitIdenticalToTheStridedLoopAndAcrossThreads) {
  for (const tg::DType dt : {tg::kFloat32, tg::kFloat64}) {
    for (const int64_t n : {1, 7, 129, 100003}) {  // 100003: several thread pieces
      std::vector<std::vector<double>> reference, one, two;
      reference = map_results(dt, n, /*via_strides=*/true);
      {
        tg::NumThreadsGuard threads(1);
        one = map_results(dt, n);
      }
      {
        tg::NumThreadsGuard threads(2);
        two = map_results(dt, n);
      }
      EXPECT_EQ(one, reference) << dt << " n=" << n;
      EXPECT_EQ(two, reference) << dt << " n=" << n;
    }
  }
}

TEST(ElementwiseTest, HalfTypesAndEmptyTensors) {
  // float16 goes through the strided loop (computed in float, rounded once); an empty
  // operand gives an empty result without reading anything.
  const Tensor h = tg::tensor({2048.f, 1.f}, {2}).to(tg::kFloat16);
  EXPECT_EQ(as_doubles(tg::detail::unary_map(h, [](auto v) { return v + 1; })),
            (std::vector<double>{2048, 2}));
  const Tensor e = tg::zeros({0, 3});
  EXPECT_EQ(tg::detail::binary_map(e, tg::ones({3}), "test", [](auto u, auto v) { return u + v; })
                .shape(),
            (tg::Shape{0, 3}));
  EXPECT_EQ(tg::detail::binary_map(e, e, "test", [](auto u, auto v) { return u + v; }).numel(), 0);
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
