// tests/core/copy_test.cpp — copy_, fill_, to, clone and contiguous.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/parallel.h"
#include "test_util.h"

namespace tg {
namespace {

using ::testing::ElementsAre;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

using ::tg::testing::as_doubles;
using ::tg::testing::kAllDTypes;

// A 1-D float64 tensor.
Tensor f64(std::vector<double> values) { return tensor(values); }

// ---- dtype conversion

TEST(CopyTest, EveryDTypePairRoundTripsSmallIntegers) {
  // 0 and 1 are exact in every dtype, including bool.
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      Tensor src = f64({0.0, 1.0, 1.0, 0.0}).to(from);
      Tensor dst = zeros({4}, to);
      dst.copy_(src);
      EXPECT_EQ(dst.dtype(), to);
      EXPECT_THAT(as_doubles(dst), ElementsAre(0.0, 1.0, 1.0, 0.0))
          << dtype_name(from) << " -> " << dtype_name(to);
    }
  }
}

TEST(CopyTest, EveryNonBoolDTypePairKeepsSmallSignedIntegers) {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      if (from == kBool || to == kBool) continue;
      Tensor dst = zeros({3}, to);
      dst.copy_(f64({-7.0, 3.0, 100.0}).to(from));
      EXPECT_THAT(as_doubles(dst), ElementsAre(-7.0, 3.0, 100.0))
          << dtype_name(from) << " -> " << dtype_name(to);
    }
  }
}

TEST(CopyTest, FloatToInt64TruncatesTowardZero) {
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor dst = zeros({6}, kInt64);
    dst.copy_(f64({2.75, -2.75, 0.5, -0.5, 3.0, -1.5}).to(from));
    EXPECT_THAT(dst.to_vector<int64_t>(), ElementsAre(2, -2, 0, 0, 3, -1)) << dtype_name(from);
  }
}

TEST(CopyTest, FloatToInt64SaturatesAndMapsNaNToZero) {
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor dst = zeros({5}, kInt64);
    dst.copy_(f64({kNaN, kInf, -kInf, 1e300, -1e300}).to(from));
    EXPECT_THAT(dst.to_vector<int64_t>(),
                ElementsAre(0, kInt64Max, kInt64Min, kInt64Max, kInt64Min))
        << dtype_name(from);
  }
}

TEST(CopyTest, Float64ToInt64AtTheEdgesOfTheRange) {
  // 2^63 is the first double that does not fit; -2^63 fits exactly.
  Tensor dst = zeros({3}, kInt64);
  dst.copy_(f64({9223372036854775808.0, -9223372036854775808.0, 9223372036854774784.0}));
  EXPECT_THAT(dst.to_vector<int64_t>(),
              ElementsAre(kInt64Max, kInt64Min, int64_t{9223372036854774784}));
}

TEST(CopyTest, AnythingToBoolIsNonZero) {
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor dst = zeros({6}, kBool);
    dst.copy_(f64({0.0, -0.0, 0.1, -3.0, kNaN, -kInf}).to(from));
    EXPECT_THAT(dst.to_vector<bool>(), ElementsAre(false, false, true, true, true, true))
        << dtype_name(from);
  }
  Tensor dst = zeros({4}, kBool);
  dst.copy_(tensor({0, 2, -1, 0}, {4}));
  EXPECT_THAT(dst.to_vector<bool>(), ElementsAre(false, true, true, false));
}

TEST(CopyTest, TinyFloatToBoolIsTrueEvenWhenItWouldRoundToZero) {
  // 1e-300 is not zero in float64 (but would be in float32): bool is decided on the source.
  Tensor dst = zeros({1}, kBool);
  dst.copy_(f64({1e-300}));
  EXPECT_TRUE(dst.item<bool>());
}

TEST(CopyTest, BoolToNumbersIsZeroOrOne) {
  Tensor src = tensor({true, false, true}, {3});
  for (DType to : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64}) {
    Tensor dst = full({3}, 5.0, to);
    dst.copy_(src);
    EXPECT_THAT(as_doubles(dst), ElementsAre(1.0, 0.0, 1.0)) << dtype_name(to);
  }
}

TEST(CopyTest, Int64ToFloatingTypes) {
  Tensor src = tensor(std::vector<int64_t>{-3, 1 << 24, (1 << 24) + 1, 100000});
  Tensor d32 = zeros({4}, kFloat32).copy_(src);
  // 2^24 + 1 is not a float: round to nearest even (2^24).
  EXPECT_THAT(d32.to_vector<float>(), ElementsAre(-3.f, 16777216.f, 16777216.f, 100000.f));
  Tensor d64 = zeros({4}, kFloat64).copy_(src);
  EXPECT_THAT(d64.to_vector<double>(), ElementsAre(-3.0, 16777216.0, 16777217.0, 100000.0));
  // float16 tops out at 65504: 2^24 and 100000 overflow to inf.
  Tensor d16 = zeros({4}, kFloat16).copy_(src);
  EXPECT_THAT(as_doubles(d16), ElementsAre(-3.0, kInf, kInf, kInf));
  Tensor dbf = zeros({4}, kBFloat16).copy_(src);
  // bfloat16 has 8 significant bits: 100000 rounds to 99840 (0x47C3 -> 1.5234375 * 2^16).
  EXPECT_THAT(as_doubles(dbf), ElementsAre(-3.0, 16777216.0, 16777216.0, 99840.0));
}

TEST(CopyTest, Float64ToNarrowerFloatsRoundsToNearest) {
  Tensor src = f64({0.1, 1e300, -1e300, 1.0 + 1.0 / 2048.0});
  Tensor d32 = zeros({4}, kFloat32).copy_(src);
  EXPECT_EQ(d32.at<float>({0}), 0.1f);
  EXPECT_EQ(d32.at<float>({1}), std::numeric_limits<float>::infinity());
  EXPECT_EQ(d32.at<float>({2}), -std::numeric_limits<float>::infinity());
  // 1 + 2^-11 is exactly halfway between two float16 values: ties go to even (1.0).
  Tensor d16 = zeros({4}, kFloat16).copy_(src);
  EXPECT_EQ(static_cast<float>(d16.at<Half>({3})), 1.f);
  EXPECT_EQ(static_cast<float>(d16.at<Half>({1})), std::numeric_limits<float>::infinity());
}

TEST(CopyTest, HalfAndBFloat16WidenExactly) {
  Tensor h = f64({0.333251953125, -65504.0}).to(kFloat16);  // both exact float16 values
  EXPECT_THAT(h.to(kFloat64).to_vector<double>(), ElementsAre(0.333251953125, -65504.0));
  Tensor b = f64({3.140625, 1e38}).to(kBFloat16);
  EXPECT_EQ(b.to(kFloat32).at<float>({0}), 3.140625f);
  EXPECT_EQ(b.to(kFloat16).to(kFloat32).at<float>({1}), std::numeric_limits<float>::infinity());
}

TEST(CopyTest, NaNSurvivesFloatingConversions) {
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    for (DType to : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      Tensor dst = zeros({1}, to).copy_(f64({kNaN}).to(from));
      EXPECT_TRUE(std::isnan(as_doubles(dst)[0])) << dtype_name(from) << " -> " << dtype_name(to);
    }
  }
}

TEST(CopyTest, ContiguousHalfConversionsMatchTheScalarOnes) {
  // Contiguous float32 <-> float16/bfloat16 copies take the vectorised loops of core/half.h,
  // split over threads: every element must be what the scalar conversion gives. Random bit
  // patterns (NaNs, subnormals and Infs among them) and values around 1, 100002 of them (no
  // multiple of a vector width).
  std::mt19937 rng(3);
  std::vector<float> values;
  for (int i = 0; i < 100002; ++i) {
    const uint32_t b = static_cast<uint32_t>(rng());
    values.push_back(i % 2 ? std::bit_cast<float>(b) : 1.0f + std::ldexp(float(b % 4096), -12));
  }
  const Tensor x = tensor(values).view({3, 33334, 1});
  for (int threads : {1, 3}) {
    NumThreadsGuard guard(threads);
    const Tensor h = x.to(kFloat16), bf = x.to(kBFloat16);
    const Tensor h_back = h.to(kFloat32), bf_back = bf.to(kFloat32);
    const std::vector<Half> hv = h.to_vector<Half>();
    const std::vector<BFloat16> bv = bf.to_vector<BFloat16>();
    const std::vector<float> hw = h_back.to_vector<float>(), bw = bf_back.to_vector<float>();
    for (size_t i = 0; i < hv.size(); ++i) {
      ASSERT_EQ(hv[i].bits, Half(values[i]).bits) << i;
      ASSERT_EQ(bv[i].bits, BFloat16(values[i]).bits) << i;
      ASSERT_EQ(std::bit_cast<uint32_t>(hw[i]), std::bit_cast<uint32_t>(float(hv[i]))) << i;
      ASSERT_EQ(std::bit_cast<uint32_t>(bw[i]), std::bit_cast<uint32_t>(float(bv[i]))) << i;
    }
  }
}

TEST(CopyTest, HalfConversionsOfViewsWithContiguousRowsMatchTheScalarOnes) {
  // A (B, T, H, D) tensor seen as (B, H, T, D), as attention's heads are: its rows (D values)
  // are contiguous, the rest is not, so the conversion goes row by row through the
  // vectorised loops. Both directions, and a source that is a view too.
  std::mt19937 rng(4);
  std::vector<float> values;
  for (int i = 0; i < 2 * 5 * 3 * 20; ++i) {
    values.push_back(i % 3 ? std::ldexp(float(rng() % 100000), -9)
                           : std::bit_cast<float>(uint32_t(rng())));
  }
  const Tensor x = tensor(values).view({2, 5, 3, 20}).transpose(1, 2);  // rows of 20
  for (int threads : {1, 3}) {
    NumThreadsGuard guard(threads);
    for (DType half : {kFloat16, kBFloat16}) {
      const Tensor h = x.to(half);
      const Tensor back = empty({2, 5, 3, 20}, kFloat32).transpose(1, 2).copy_(h);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t b = i / 300, hh = i / 100 % 3, t = i / 20 % 5, d = i % 20;
        const float v = x.at<float>({b, hh, t, d});
        const float got = h.to(kFloat32).at<float>({b, hh, t, d});
        const float want = half == kFloat16 ? float(Half(v)) : float(BFloat16(v));
        ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << i;
        ASSERT_EQ(std::bit_cast<uint32_t>(back.at<float>({b, hh, t, d})),
                  std::bit_cast<uint32_t>(want))
            << i;
      }
    }
  }
}

TEST(CopyTest, HalfConversionsBetweenViewsOfOneDenseLayoutMatchTheScalarOnes) {
  // Source and destination both laid out (B, T, H, D) and seen as (B, H, T, D): the copy is
  // one flat run over their memory. Rows of 20 and of 3 (too short for the row loop), both
  // directions, 1 and 3 threads.
  std::mt19937 rng(5);
  for (const int64_t d : {20, 3}) {
    std::vector<float> values;
    for (int64_t i = 0; i < 2 * 5 * 3 * d; ++i) {
      values.push_back(i % 3 ? std::ldexp(float(rng() % 100000), -9)
                             : std::bit_cast<float>(uint32_t(rng())));
    }
    const Tensor x = tensor(values).view({2, 5, 3, d}).transpose(1, 2);
    for (int threads : {1, 3}) {
      NumThreadsGuard guard(threads);
      for (DType half : {kFloat16, kBFloat16}) {
        const Tensor h = empty({2, 5, 3, d}, half).transpose(1, 2).copy_(x);
        const Tensor back = empty({2, 5, 3, d}, kFloat32).transpose(1, 2).copy_(h);
        for (int64_t i = 0; i < x.numel(); ++i) {
          const DimVec at{i / (15 * d), i / (5 * d) % 3, i / d % 5, i % d};
          const float v = x.at<float>(at);
          const float want = half == kFloat16 ? float(Half(v)) : float(BFloat16(v));
          ASSERT_EQ(std::bit_cast<uint32_t>(back.at<float>(at)), std::bit_cast<uint32_t>(want))
              << "d " << d << ", element " << i;
        }
      }
    }
  }
}

TEST(CopyTest, SameDTypeCopiesOfViewsMoveEveryValue) {
  // Within one dtype the copy moves runs with memcpy: one run when both sides are contiguous
  // or dense in one layout, one per row when only the rows are contiguous (attention's
  // gradients, seen as (B, H, T, D), copied into their slice of a (B, T, 3C) gradient, as
  // split's backward does), and element by element when rows are short. Each of them, every
  // dtype, rows of 20 and of 3, 1 and 3 threads.
  for (const DType dtype : kAllDTypes) {
    for (const int64_t d : {20, 3}) {
      // (B, T, H, D) memory seen as (B, H, T, D), holding small integers (0 and 1 for bool)
      std::vector<double> values;
      for (int64_t i = 0; i < 2 * 5 * 3 * d; ++i)
        values.push_back(double(i % (dtype == kBool ? 2 : 97)));
      const Tensor x = tensor(values).to(dtype).view({2, 5, 3, d}).transpose(1, 2);
      for (int threads : {1, 3}) {
        NumThreadsGuard guard(threads);
        const Tensor contiguous = empty({2, 3, 5, d}, dtype).copy_(x.contiguous());
        const Tensor same_layout = empty({2, 5, 3, d}, dtype).transpose(1, 2).copy_(x);
        const Tensor wide = zeros({2, 5, 3, 3 * d}, dtype);
        wide.narrow(3, d, d).transpose(1, 2).copy_(x);
        const Tensor middle = wide.narrow(3, d, d).transpose(1, 2);
        for (const Tensor& got : {contiguous, same_layout, middle}) {
          EXPECT_EQ(as_doubles(got.contiguous()), as_doubles(x.contiguous()))
              << dtype_name(dtype) << ", d " << d << ", " << threads << " threads";
        }
        // The slices beside the one written stay zero.
        EXPECT_EQ(as_doubles(wide.narrow(3, 0, d).contiguous()), std::vector<double>(30 * d, 0.0));
        EXPECT_EQ(as_doubles(wide.narrow(3, 2 * d, d).contiguous()),
                  std::vector<double>(30 * d, 0.0));
      }
    }
  }
}

TEST(CopyTest, CopyReturnsTheDestination) {
  Tensor dst = zeros({2});
  Tensor& r = dst.copy_(ones({2}));
  EXPECT_EQ(&r, &dst);
}

// ---- broadcasting

TEST(CopyTest, BroadcastsARowOverEveryRow) {
  Tensor dst = zeros({3, 2});
  dst.copy_(tensor({1.f, 2.f}));
  EXPECT_THAT(dst.to_vector<float>(), ElementsAre(1.f, 2.f, 1.f, 2.f, 1.f, 2.f));
}

TEST(CopyTest, BroadcastsAColumnOverEveryColumn) {
  Tensor dst = zeros({2, 3});
  dst.copy_(tensor({1.f, 2.f}, {2, 1}));
  EXPECT_THAT(dst.to_vector<float>(), ElementsAre(1.f, 1.f, 1.f, 2.f, 2.f, 2.f));
}

TEST(CopyTest, BroadcastsAScalarWithConversion) {
  Tensor dst = zeros({2, 2}, kInt64);
  dst.copy_(scalar_tensor(-4.9, kFloat64));
  EXPECT_THAT(dst.to_vector<int64_t>(), ElementsAre(-4, -4, -4, -4));
}

TEST(CopyTest, BroadcastsOverLeadingDims) {
  Tensor dst = zeros({2, 2, 2}, kFloat64);
  dst.copy_(tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}));
  EXPECT_THAT(dst.to_vector<double>(), ElementsAre(1, 2, 3, 4, 1, 2, 3, 4));
}

TEST(CopyTest, CopiesBetweenEmptyTensors) {
  Tensor dst = zeros({0, 3});
  dst.copy_(ones({3}));
  dst.copy_(ones({0, 3}, kInt64));
  EXPECT_EQ(dst.numel(), 0);
}

TEST(CopyTest, CopiesZeroDimIntoZeroDim) {
  Tensor dst = scalar_tensor(0.0, kFloat16);
  dst.copy_(scalar_tensor(2.5, kFloat64));
  EXPECT_EQ(static_cast<float>(dst.item<Half>()), 2.5f);
}

TEST(CopyTest, NonBroadcastableSourceNamesBothShapes) {
  Tensor dst = zeros({2, 3});
  EXPECT_TG_THROW(dst.copy_(ones({4})), ShapeError, "copy_", "(2, 3)", "(4)");
  EXPECT_TG_THROW(dst.copy_(ones({3, 2})), ShapeError, "copy_", "(2, 3)", "(3, 2)");
}

TEST(CopyTest, SourceLargerThanDestinationNamesBothShapes) {
  // Broadcasting never grows the destination (PyTorch: "output with shape [3] doesn't
  // match the broadcast shape [1, 3]").
  EXPECT_TG_THROW(zeros({3}).copy_(ones({1, 3})), ShapeError, "copy_", "(1, 3)", "(3)");
  EXPECT_TG_THROW(zeros({1, 3}).copy_(ones({2, 3})), ShapeError, "copy_", "(2, 3)", "(1, 3)");
  EXPECT_TG_THROW(zeros({}).copy_(ones({2})), ShapeError, "copy_", "(2)", "()");
}

TEST(CopyTest, FailedCopyLeavesTheDestinationUntouched) {
  Tensor dst = full({2, 2}, 7.0);
  EXPECT_THROW(dst.copy_(ones({3})), ShapeError);
  EXPECT_THAT(dst.to_vector<float>(), ElementsAre(7.f, 7.f, 7.f, 7.f));
}

// ---- non-contiguous destinations and sources

TEST(CopyTest, CopyIntoATransposedView) {
  Tensor base = zeros({2, 3});
  base.t().copy_(tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {3, 2}));
  // base[i][j] = src[j][i]
  EXPECT_THAT(base.to_vector<float>(), ElementsAre(1.f, 3.f, 5.f, 2.f, 4.f, 6.f));
}

TEST(CopyTest, CopyIntoASlicedViewLeavesTheRestAlone) {
  Tensor base = zeros({3, 4}, kInt64);
  base.slice(1, 0, 4, 2).copy_(tensor({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_THAT(base.to_vector<int64_t>(), ElementsAre(1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0));
  base.select(0, 1).copy_(scalar_tensor(9.0, kFloat32));
  EXPECT_THAT(base.to_vector<int64_t>(), ElementsAre(1, 0, 2, 0, 9, 9, 9, 9, 5, 0, 6, 0));
}

TEST(CopyTest, CopyFromANonContiguousSource) {
  Tensor src = arange(0, 12).view({3, 4}).slice(1, 1, 4, 2);  // [[1, 3], [5, 7], [9, 11]]
  Tensor dst = zeros({3, 2}, kFloat64);
  dst.copy_(src);
  EXPECT_THAT(dst.to_vector<double>(), ElementsAre(1, 3, 5, 7, 9, 11));
}

TEST(CopyTest, CopyFromAnExpandedSource) {
  Tensor src = tensor({1.f, 2.f, 3.f}).expand({2, 3});
  Tensor dst = zeros({2, 3}, kInt64).copy_(src);
  EXPECT_THAT(dst.to_vector<int64_t>(), ElementsAre(1, 2, 3, 1, 2, 3));
}

TEST(CopyTest, CopyBetweenTwoTransposedViews) {
  Tensor a = arange(0, 6).view({2, 3});
  Tensor b = zeros({3, 2});
  b.t().copy_(a);  // b.t() is (2, 3)
  EXPECT_THAT(b.to_vector<float>(), ElementsAre(0.f, 3.f, 1.f, 4.f, 2.f, 5.f));
}

// ---- overlapping source and destination

TEST(CopyTest, OverlappingTransposeCopiesCorrectly) {
  Tensor x = arange(0, 9).view({3, 3});
  x.copy_(x.t());
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(0.f, 3.f, 6.f, 1.f, 4.f, 7.f, 2.f, 5.f, 8.f));
}

TEST(CopyTest, OverlappingTransposeOfALargerMatrix) {
  const int64_t n = 17;
  Tensor x = arange(0, static_cast<double>(n * n), 1, kInt64).view({n, n});
  x.copy_(x.t());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(x.at<int64_t>({i, j}), j * n + i);
  }
}

// A copy big enough to be cut into pieces (core/parallel.h) copies every element once on any
// number of threads: a 4-d view whose rows (the last dim) start mid-tensor in every piece.
TEST(CopyTest, ALargeStridedCopyIsTheSameOnAnyNumberOfThreads) {
  const Tensor base = arange(0, 2.0 * 3 * 64 * 1000, 1, kInt64).view({2, 3, 64, 1000});
  const Tensor src = base.permute({2, 0, 3, 1}).narrow(2, 1, 997);  // [64, 2, 997, 3]
  for (int threads : {1, 2, 3, 7}) {
    NumThreadsGuard guard(threads);
    Tensor dst = zeros(src.shape(), kInt64);
    dst.copy_(src);
    // dst[a, b, c, d] = base[b, d, a, c + 1], whose value is its own flat index.
    const std::vector<int64_t> got = dst.to_vector<int64_t>();
    int64_t i = 0;
    for (int64_t a = 0; a < 64; ++a) {
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t c = 0; c < 997; ++c) {
          for (int64_t d = 0; d < 3; ++d, ++i) {
            ASSERT_EQ(got[i], ((b * 3 + d) * 64 + a) * 1000 + c + 1)
                << threads << " threads, at " << a << ", " << b << ", " << c << ", " << d;
          }
        }
      }
    }
  }
}

TEST(CopyTest, OverlappingShiftedSlices) {
  // x[1:] = x[:-1] must shift by one (the source is read before anything is written).
  Tensor x = arange(0, 6);
  x.slice(0, 1, 6).copy_(x.slice(0, 0, 5));
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(0.f, 0.f, 1.f, 2.f, 3.f, 4.f));
  Tensor y = arange(0, 6);
  y.slice(0, 0, 5).copy_(y.slice(0, 1, 6));
  EXPECT_THAT(y.to_vector<float>(), ElementsAre(1.f, 2.f, 3.f, 4.f, 5.f, 5.f));
}

TEST(CopyTest, OverlappingBroadcastFromARowOfItself) {
  Tensor x = arange(0, 6).view({2, 3});
  x.copy_(x.select(0, 1));
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(3.f, 4.f, 5.f, 3.f, 4.f, 5.f));
}

TEST(CopyTest, CopyIntoItselfIsANoOp) {
  Tensor x = arange(0, 4).view({2, 2});
  x.copy_(x);
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(0.f, 1.f, 2.f, 3.f));
}

TEST(CopyTest, DisjointViewsOfOneStorage) {
  Tensor x = arange(0, 6).view({2, 3});
  x.select(0, 0).copy_(x.select(0, 1));
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(3.f, 4.f, 5.f, 3.f, 4.f, 5.f));
}

// ---- expanded destinations

TEST(CopyTest, CopyIntoAnExpandedViewIsMisuse) {
  Tensor base = zeros({3});
  Tensor e = base.expand({2, 3});
  EXPECT_TG_THROW(e.copy_(ones({2, 3})), MisuseError, "copy_", "(2, 3)", "stride 0", "dim 0",
                  "contiguous");
  EXPECT_THAT(base.to_vector<float>(), ElementsAre(0.f, 0.f, 0.f));
}

TEST(CopyTest, FillIntoAnExpandedViewIsMisuse) {
  Tensor e = zeros({2, 1}).expand({2, 4});
  EXPECT_TG_THROW(e.fill_(1.0), MisuseError, "fill_", "(2, 4)", "stride 0", "dim 1");
}

TEST(CopyTest, ExpandingOnlySizeOneDimsStaysWritable) {
  // expand to the same shape keeps the real strides, so writing is fine.
  Tensor base = zeros({1, 3});
  base.expand({1, 3}).fill_(2.0);
  EXPECT_THAT(base.to_vector<float>(), ElementsAre(2.f, 2.f, 2.f));
}

// ---- fill_

TEST(CopyTest, FillConvertsTheValueToEveryDType) {
  EXPECT_THAT(full({2}, 2.75, kInt64).to_vector<int64_t>(), ElementsAre(2, 2));
  EXPECT_THAT(full({2}, -2.75, kInt64).to_vector<int64_t>(), ElementsAre(-2, -2));
  EXPECT_THAT(full({2}, kNaN, kInt64).to_vector<int64_t>(), ElementsAre(0, 0));
  EXPECT_THAT(full({1}, 1e30, kInt64).to_vector<int64_t>(), ElementsAre(kInt64Max));
  EXPECT_THAT(full({2}, 0.5, kBool).to_vector<bool>(), ElementsAre(true, true));
  EXPECT_THAT(full({2}, kNaN, kBool).to_vector<bool>(), ElementsAre(true, true));
  EXPECT_THAT(full({1}, 0.1, kFloat32).to_vector<float>(), ElementsAre(0.1f));
  EXPECT_THAT(as_doubles(full({1}, 70000.0, kFloat16)), ElementsAre(kInf));
  EXPECT_THAT(as_doubles(full({1}, 1.0 / 3.0, kBFloat16)), ElementsAre(0.333984375));
}

TEST(CopyTest, FillReturnsTheTensor) {
  Tensor t = zeros({2});
  Tensor& r = t.fill_(1.0);
  EXPECT_EQ(&r, &t);
}

TEST(CopyTest, FillATransposedViewFillsTheBase) {
  Tensor base = zeros({2, 3});
  base.t().fill_(4.0);
  EXPECT_THAT(base.to_vector<float>(), ElementsAre(4.f, 4.f, 4.f, 4.f, 4.f, 4.f));
}

TEST(CopyTest, FillASlicedViewOnlyTouchesTheSlice) {
  Tensor base = zeros({4, 4}, kInt64);
  base.slice(0, 1, 4, 2).slice(1, 0, 4, 3).fill_(1.0);  // rows 1, 3 x cols 0, 3
  EXPECT_THAT(base.to_vector<int64_t>(),
              ElementsAre(0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1));
}

TEST(CopyTest, FillAColumnAndAnElement) {
  Tensor base = zeros({2, 3}, kFloat64);
  base.select(1, 2).fill_(-1.0);
  base[0][0].fill_(5.0);
  EXPECT_THAT(base.to_vector<double>(), ElementsAre(5, 0, -1, 0, 0, -1));
}

TEST(CopyTest, FillAnEmptyTensorDoesNothing) {
  Tensor t = zeros({0, 4});
  EXPECT_NO_THROW(t.fill_(1.0));
  EXPECT_EQ(t.numel(), 0);
}

// ---- to, clone, contiguous

TEST(CopyTest, ToAlwaysReturnsANewTensor) {
  Tensor a = tensor({1.f, 2.f});
  Tensor b = a.to(kFloat32);
  EXPECT_NE(b.impl(), a.impl());
  EXPECT_NE(b.storage(), a.storage());
  b.fill_(9.0);
  EXPECT_THAT(a.to_vector<float>(), ElementsAre(1.f, 2.f));
}

TEST(CopyTest, ToConvertsTheDType) {
  Tensor a = tensor({1.5f, -2.5f}, {2, 1});
  Tensor b = a.to(kInt64);
  EXPECT_EQ(b.dtype(), kInt64);
  EXPECT_EQ(b.shape(), Shape({2, 1}));
  EXPECT_THAT(b.to_vector<int64_t>(), ElementsAre(1, -2));
  b.fill_(0.0);
  EXPECT_THAT(a.to_vector<float>(), ElementsAre(1.5f, -2.5f));
}

TEST(CopyTest, ToOfAViewIsContiguous) {
  Tensor v = arange(0, 6).view({2, 3}).t();
  Tensor c = v.to(kFloat64);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.shape(), Shape({3, 2}));
  EXPECT_THAT(c.to_vector<double>(), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(CopyTest, ToDoesNotCopyRequiresGrad) {
  Tensor a = ones({2});
  a.requires_grad_();
  NoGradGuard no_grad;  // with grad mode on they are recorded (tests/core/view_grad_test.cpp)
  EXPECT_FALSE(a.to(kFloat64).requires_grad());
  EXPECT_FALSE(a.clone().requires_grad());
}

TEST(CopyTest, CloneIsContiguousAndIndependent) {
  Tensor base = arange(0, 6).view({2, 3});
  Tensor c = base.t().clone();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.shape(), Shape({3, 2}));
  EXPECT_EQ(c.strides(), Strides({2, 1}));
  EXPECT_EQ(c.storage_offset(), 0);
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_NE(c.storage(), base.storage());
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(0.f, 3.f, 1.f, 4.f, 2.f, 5.f));
  c.fill_(-1.0);
  EXPECT_THAT(base.to_vector<float>(), ElementsAre(0.f, 1.f, 2.f, 3.f, 4.f, 5.f));
  base.fill_(7.0);
  EXPECT_EQ(c.at<float>({0, 0}), -1.f);
}

TEST(CopyTest, CloneKeepsEveryDType) {
  for (DType dt : kAllDTypes) {
    Tensor a = f64({0.0, 1.0}).to(dt);
    Tensor c = a.clone();
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_THAT(as_doubles(c), ElementsAre(0.0, 1.0)) << dtype_name(dt);
  }
}

TEST(CopyTest, CloneOfAnExpandedViewMaterialisesIt) {
  Tensor c = tensor({1.f, 2.f}, {2, 1}).expand({2, 3}).clone();
  EXPECT_EQ(c.strides(), Strides({3, 1}));
  c.fill_(0.0);  // writable now
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(0.f, 0.f, 0.f, 0.f, 0.f, 0.f));
}

TEST(CopyTest, ContiguousReturnsTheSameImplWhenAlreadyContiguous) {
  Tensor a = zeros({2, 3});
  EXPECT_EQ(a.contiguous().impl(), a.impl());
  Tensor row = a.select(0, 1);  // a contiguous view at an offset
  EXPECT_EQ(row.contiguous().impl(), row.impl());
}

TEST(CopyTest, ContiguousCopiesANonContiguousView) {
  Tensor a = arange(0, 6).view({2, 3});
  Tensor t = a.t();
  Tensor c = t.contiguous();
  EXPECT_NE(c.impl(), t.impl());
  EXPECT_NE(c.storage(), a.storage());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(0.f, 3.f, 1.f, 4.f, 2.f, 5.f));
  c.fill_(0.0);
  EXPECT_EQ(a.at<float>({1, 2}), 5.f);
}

}  // namespace
}  // namespace tg
