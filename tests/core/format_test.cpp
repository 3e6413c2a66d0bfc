// tests/core/format_test.cpp — printing tensors as PyTorch does.
//
// Every expected string below is what PyTorch prints for the same tensor, with the three
// documented differences: the dtype is always printed (", dtype=float32"), requires_grad
// prints "requires_grad=true", and bools print as true/false.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace tg {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

// A float32 tensor of shape `shape` holding 0, 1, 2, ... (numel of them).
Tensor iota(const Shape& shape, DType dtype = kFloat32) {
  return arange(0, static_cast<double>(checked_numel(shape, "iota")), 1, dtype).view(shape);
}

// ---- floating-point modes

TEST(FormatTest, FixedModeWithRequiresGrad) {
  Tensor t = tensor({1.f, -2.5f}, {1, 2});
  t.requires_grad_();
  EXPECT_EQ(t.to_string(), "tensor([[ 1.0000, -2.5000]], dtype=float32, requires_grad=true)");
}

TEST(FormatTest, FixedModeOneDim) {
  EXPECT_EQ(tensor({1.f, -2.5f}).to_string(), "tensor([ 1.0000, -2.5000], dtype=float32)");
}

TEST(FormatTest, FixedModeRightAlignsToTheWidestElement) {
  // PyTorch: tensor([  0.5000, 500.0000])
  EXPECT_EQ(tensor({0.5f, 500.f}).to_string(), "tensor([  0.5000, 500.0000], dtype=float32)");
  EXPECT_EQ(tensor({1.f / 3, 20.f / 3, 100.f}).to_string(),
            "tensor([  0.3333,   6.6667, 100.0000], dtype=float32)");
}

TEST(FormatTest, IntegerValuedFloatsPrintWithATrailingDot) {
  EXPECT_EQ(tensor({1.f, 2.f, 3.f}).to_string(), "tensor([1., 2., 3.], dtype=float32)");
  EXPECT_EQ(tensor({1.f, 1000.f}).to_string(), "tensor([   1., 1000.], dtype=float32)");
  EXPECT_EQ(tensor({-0.f, 1.f}).to_string(), "tensor([-0., 1.], dtype=float32)");
}

TEST(FormatTest, AllZerosPrintInIntMode) {
  EXPECT_EQ(zeros({1, 2}).to_string(), "tensor([[0., 0.]], dtype=float32)");
  EXPECT_EQ(scalar_tensor(0.0).to_string(), "tensor(0., dtype=float32)");
}

TEST(FormatTest, ScientificWhenValuesSpanMoreThanAThousandTimes) {
  EXPECT_EQ(tensor({1e-5f, 1.f}).to_string(), "tensor([1.0000e-05, 1.0000e+00], dtype=float32)");
  EXPECT_EQ(tensor({0.5f, 501.f}).to_string(), "tensor([5.0000e-01, 5.0100e+02], dtype=float32)");
  // Integer-valued, but 1001 / 1 > 1000.
  EXPECT_EQ(tensor({1.f, 1001.f}).to_string(), "tensor([1.0000e+00, 1.0010e+03], dtype=float32)");
}

TEST(FormatTest, ScientificWhenAboveOneHundredMillion) {
  EXPECT_EQ(tensor({1.5e8f, 2.f}).to_string(), "tensor([1.5000e+08, 2.0000e+00], dtype=float32)");
  EXPECT_EQ(tensor({1099511627776.f}).to_string(), "tensor([1.0995e+12], dtype=float32)");
  EXPECT_EQ(scalar_tensor(1e10).to_string(), "tensor(1.0000e+10, dtype=float32)");
}

TEST(FormatTest, ScientificWhenBelowOneTenThousandth) {
  EXPECT_EQ(tensor({9e-5f, 0.05f}).to_string(), "tensor([9.0000e-05, 5.0000e-02], dtype=float32)");
  EXPECT_EQ(tensor({1e-5f, 1e-6f}).to_string(), "tensor([1.0000e-05, 1.0000e-06], dtype=float32)");
  // 1e-4f is 9.99999975e-05, just below the limit (and 0.1f / 1e-4f is just above 1000).
  EXPECT_EQ(tensor({1e-4f, 0.1f}).to_string(), "tensor([1.0000e-04, 1.0000e-01], dtype=float32)");
}

TEST(FormatTest, ScientificRightAlignsNegativesAndThreeDigitExponents) {
  EXPECT_EQ(tensor({1.5f, -1e-3f}).to_string(),
            "tensor([ 1.5000e+00, -1.0000e-03], dtype=float32)");
  EXPECT_EQ(tensor({1e100, 1.0}, {2}).to_string(),
            "tensor([1.0000e+100,  1.0000e+00], dtype=float64)");
  EXPECT_EQ(tensor({1e-100, -1.0}, {2}).to_string(),
            "tensor([1.0000e-100, -1.0000e+00], dtype=float64)");
}

TEST(FormatTest, NaNAndInfInFixedMode) {
  EXPECT_EQ(tensor({kNaNf, -kInff, 2.5f}).to_string(),
            "tensor([   nan,   -inf, 2.5000], dtype=float32)");
  EXPECT_EQ(tensor({1.5f, kNaNf, kInff}).to_string(),
            "tensor([1.5000,    nan,    inf], dtype=float32)");
}

TEST(FormatTest, NaNAndInfInScientificMode) {
  EXPECT_EQ(tensor({kNaNf, 1.5e-5f}).to_string(),
            "tensor([       nan, 1.5000e-05], dtype=float32)");
}

TEST(FormatTest, NaNAndInfInIntModeDoNotWidenTheColumns) {
  // PyTorch sizes the columns from the finite non-zero values only.
  EXPECT_EQ(tensor({kNaNf, 1.f}).to_string(), "tensor([nan, 1.], dtype=float32)");
  EXPECT_EQ(tensor({kInff, -kInff, 1.f}).to_string(), "tensor([inf, -inf, 1.], dtype=float32)");
  EXPECT_EQ(tensor({kNaNf, 10.f}).to_string(), "tensor([nan, 10.], dtype=float32)");
  EXPECT_EQ(tensor({kNaNf, 10.f, 1.f, -kInff}, {2, 2}).to_string(),
            "tensor([[nan, 10.],\n"
            "        [ 1., -inf]], dtype=float32)");
}

TEST(FormatTest, OnlyNonFiniteAndZeroValues) {
  EXPECT_EQ(tensor({0.f, kNaNf, kInff}).to_string(), "tensor([0., nan, inf], dtype=float32)");
  EXPECT_EQ(tensor({kNaNf, -kInff}).to_string(), "tensor([nan, -inf], dtype=float32)");
  EXPECT_EQ(scalar_tensor(kNaNf).to_string(), "tensor(nan, dtype=float32)");
  EXPECT_EQ(scalar_tensor(-kInff, kFloat64).to_string(), "tensor(-inf, dtype=float64)");
}

TEST(FormatTest, EveryFloatingDType) {
  EXPECT_EQ(tensor({0.1, 0.2}, {2}).to_string(), "tensor([0.1000, 0.2000], dtype=float64)");
  EXPECT_EQ(tensor({0.1, 0.2}, {2}).to(kFloat16).to_string(),
            "tensor([0.1000, 0.2000], dtype=float16)");
  // bfloat16 keeps 8 significant bits: 0.1 -> 0.10009765625.
  EXPECT_EQ(tensor({0.1, 0.2}, {2}).to(kBFloat16).to_string(),
            "tensor([0.1001, 0.2002], dtype=bfloat16)");
  EXPECT_EQ(tensor({65504.0, 1.0}, {2}).to(kFloat16).to_string(),
            "tensor([6.5504e+04, 1.0000e+00], dtype=float16)");
}

// ---- int64 and bool

TEST(FormatTest, Int64RightAligned) {
  EXPECT_EQ(tensor({-1, 10, 100}, {3}).to_string(), "tensor([ -1,  10, 100], dtype=int64)");
  EXPECT_EQ(tensor({-3, -2, -1, 0, 1, 2, 3}, {7}).to_string(),
            "tensor([-3, -2, -1,  0,  1,  2,  3], dtype=int64)");
}

TEST(FormatTest, Int64BeyondDoublePrecisionIsExact) {
  // 2^62 + 1 is not a double; it must print exactly.
  Tensor t = tensor(std::vector<int64_t>{(int64_t{1} << 62) + 1, -5});
  EXPECT_EQ(t.to_string(), "tensor([4611686018427387905,                  -5], dtype=int64)");
  Tensor m = tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::min()});
  EXPECT_EQ(m.to_string(), "tensor([-9223372036854775808], dtype=int64)");
}

TEST(FormatTest, BoolPrintsTrueAndFalse) {
  EXPECT_EQ(tensor({true, false, false, true}, {2, 2}).to_string(),
            "tensor([[ true, false],\n"
            "        [false,  true]], dtype=bool)");
  EXPECT_EQ(scalar_tensor(1.0, kBool).to_string(), "tensor(true, dtype=bool)");
}

// ---- 0-d and empty

TEST(FormatTest, ZeroDim) {
  EXPECT_EQ(scalar_tensor(3.5).to_string(), "tensor(3.5000, dtype=float32)");
  EXPECT_EQ(scalar_tensor(-7.0, kInt64).to_string(), "tensor(-7, dtype=int64)");
  EXPECT_EQ(scalar_tensor(2.0, kFloat64).to_string(), "tensor(2., dtype=float64)");
  Tensor g = scalar_tensor(3.5);
  g.requires_grad_();
  EXPECT_EQ(g.to_string(), "tensor(3.5000, dtype=float32, requires_grad=true)");
}

TEST(FormatTest, EmptyOneDim) {
  EXPECT_EQ(zeros({0}).to_string(), "tensor([], dtype=float32)");
  EXPECT_EQ(zeros({0}, kInt64).to_string(), "tensor([], dtype=int64)");
}

TEST(FormatTest, EmptyWithMoreDimsPrintsTheSize) {
  EXPECT_EQ(zeros({0, 3}).to_string(), "tensor([], size=(0, 3), dtype=float32)");
  EXPECT_EQ(zeros({2, 0, 3}, kBool).to_string(), "tensor([], size=(2, 0, 3), dtype=bool)");
  Tensor g = zeros({3, 0});
  g.requires_grad_();
  EXPECT_EQ(g.to_string(), "tensor([], size=(3, 0), dtype=float32, requires_grad=true)");
}

// ---- multi-dimensional layout

TEST(FormatTest, TwoDimRowsAreAligned) {
  EXPECT_EQ(tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}).to_string(),
            "tensor([[1., 2.],\n"
            "        [3., 4.]], dtype=float32)");
  EXPECT_EQ(tensor({1.25, 2.5, -3.75, 100.125}, {2, 2}).to_string(),
            "tensor([[  1.2500,   2.5000],\n"
            "        [ -3.7500, 100.1250]], dtype=float64)");
}

TEST(FormatTest, TransposedViewPrintsInItsOwnOrder) {
  EXPECT_EQ(tensor({1.f, 2.f, 3.f, 4.f}, {2, 2}).t().to_string(),
            "tensor([[1., 3.],\n"
            "        [2., 4.]], dtype=float32)");
}

TEST(FormatTest, ThreeDimBlocksAreSeparatedByABlankLine) {
  EXPECT_EQ(iota({2, 2, 2}).to_string(),
            "tensor([[[0., 1.],\n"
            "         [2., 3.]],\n"
            "\n"
            "        [[4., 5.],\n"
            "         [6., 7.]]], dtype=float32)");
  EXPECT_EQ(iota({3, 1, 2}).to_string(),
            "tensor([[[0., 1.]],\n"
            "\n"
            "        [[2., 3.]],\n"
            "\n"
            "        [[4., 5.]]], dtype=float32)");
  EXPECT_EQ(iota({1, 2, 3}).to_string(),
            "tensor([[[0., 1., 2.],\n"
            "         [3., 4., 5.]]], dtype=float32)");
  EXPECT_EQ(tensor({1.5f}, {1, 1, 1}).to_string(), "tensor([[[1.5000]]], dtype=float32)");
}

TEST(FormatTest, FourDimBlocksAreSeparatedByTwoBlankLines) {
  EXPECT_EQ(iota({2, 2, 2, 2}).to_string(),
            "tensor([[[[ 0.,  1.],\n"
            "          [ 2.,  3.]],\n"
            "\n"
            "         [[ 4.,  5.],\n"
            "          [ 6.,  7.]]],\n"
            "\n"
            "\n"
            "        [[[ 8.,  9.],\n"
            "          [10., 11.]],\n"
            "\n"
            "         [[12., 13.],\n"
            "          [14., 15.]]]], dtype=float32)");
}

// ---- line wrapping

TEST(FormatTest, LongFloatRowWrapsAtEightyColumns) {
  std::vector<float> values;
  for (int i = 0; i < 40; ++i) values.push_back(static_cast<float>(i) / 3.f);
  EXPECT_EQ(tensor(values).to_string(),
            "tensor([ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n"
            "         2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n"
            "         5.3333,  5.6667,  6.0000,  6.3333,  6.6667,  7.0000,  7.3333,  7.6667,\n"
            "         8.0000,  8.3333,  8.6667,  9.0000,  9.3333,  9.6667, 10.0000, 10.3333,\n"
            "        10.6667, 11.0000, 11.3333, 11.6667, 12.0000, 12.3333, 12.6667, 13.0000], "
            "dtype=float32)");
}

TEST(FormatTest, LongIntRowWraps) {
  EXPECT_EQ(arange(25, kInt64).to_string(),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
            "        18, 19, 20, 21, 22, 23, 24], dtype=int64)");
}

TEST(FormatTest, LongBoolRowWraps) {
  Tensor t = ones({30}, kBool);
  const std::string row = "true, true, true, true, true, true, true, true, true, true, true, true";
  EXPECT_EQ(t.to_string(), "tensor([" + row + ",\n        " + row +
                               ",\n        true, true, true, true, true, true], dtype=bool)");
}

TEST(FormatTest, RowsOfAMatrixWrapWithADeeperIndent) {
  Tensor t = arange(0, 30000, 1000, kInt64).view({2, 15});
  EXPECT_EQ(t.to_string(),
            "tensor([[    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
            "         10000, 11000, 12000, 13000, 14000],\n"
            "        [15000, 16000, 17000, 18000, 19000, 20000, 21000, 22000, 23000, 24000,\n"
            "         25000, 26000, 27000, 28000, 29000]], dtype=int64)");
}

TEST(FormatTest, LinesOfAFullRowFitInEightyColumns) {
  Tensor t = arange(0, 1000);  // exactly at the threshold: printed in full
  const std::string s = t.to_string();
  size_t start = 0, lines = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    // The last line carries the ", dtype=float32)" suffix, which PyTorch does not count.
    if (end != s.size()) {
      EXPECT_LE(end - start, 80u) << s.substr(start, end - start);
    }
    start = end + 1;
    ++lines;
  }
  EXPECT_EQ(lines, 84u);  // PyTorch: 12 elements per line, 1000 / 12 -> 84 lines
}

TEST(FormatTest, RowsWithoutFiniteNonZeroValuesWrapLikePyTorch) {
  // PyTorch's column width is 1 here, so it fits 24 elements on a line (wider than 80).
  const std::string zeros24 =
      "0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., "
      "0., 0.";
  EXPECT_EQ(zeros({40}).to_string(),
            "tensor([" + zeros24 +
                ",\n        0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., "
                "0., 0., 0.], dtype=float32)");
  std::string nans = "tensor([nan";
  for (int i = 1; i < 30; ++i) nans += i == 24 ? ",\n        nan" : ", nan";
  EXPECT_EQ(full({30}, std::nan("")).to_string(), nans + "], dtype=float32)");
}

// ---- summarisation

TEST(FormatTest, AThousandElementsArePrintedInFull) {
  const std::string s = arange(0, 1000).to_string();
  EXPECT_THAT(s, StartsWith("tensor([  0.,   1.,   2.,   3.,   4.,   5.,   6.,   7.,   8.,   9.,"
                            "  10.,  11.,\n         12.,"));
  EXPECT_THAT(s, HasSubstr("500., 501.,"));
  EXPECT_EQ(s.find("..."), std::string::npos);
  EXPECT_THAT(s, ::testing::EndsWith("\n        996., 997., 998., 999.], dtype=float32)"));
}

TEST(FormatTest, MoreThanAThousandElementsAreSummarised) {
  EXPECT_EQ(arange(0, 2000, 1, kInt64).to_string(),
            "tensor([   0,    1,    2,  ..., 1997, 1998, 1999], dtype=int64)");
  EXPECT_EQ(arange(0, 1001).to_string(),
            "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.], dtype=float32)");
}

TEST(FormatTest, SummarisedMatrixWrapsItsRows) {
  EXPECT_EQ(iota({2, 1000}).to_string(),
            "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
            "         9.9900e+02],\n"
            "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
            "         1.9990e+03]], dtype=float32)");
}

TEST(FormatTest, SummarisedRowsOfAMatrix) {
  const std::string s = iota({30, 40}).to_string();
  EXPECT_THAT(s, StartsWith("tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 3.7000e+01, "
                            "3.8000e+01,\n"
                            "         3.9000e+01],\n"
                            "        [4.0000e+01,"));
  EXPECT_THAT(s, HasSubstr("1.1900e+02],\n        ...,\n        [1.0800e+03,"));
  EXPECT_THAT(s, ::testing::EndsWith("1.1990e+03]], dtype=float32)"));
}

TEST(FormatTest, SummarisedThreeDimTensor) {
  EXPECT_EQ(iota({10, 10, 12}, kInt64).to_string(),
            R"T(tensor([[[   0,    1,    2,  ...,    9,   10,   11],
         [  12,   13,   14,  ...,   21,   22,   23],
         [  24,   25,   26,  ...,   33,   34,   35],
         ...,
         [  84,   85,   86,  ...,   93,   94,   95],
         [  96,   97,   98,  ...,  105,  106,  107],
         [ 108,  109,  110,  ...,  117,  118,  119]],

        [[ 120,  121,  122,  ...,  129,  130,  131],
         [ 132,  133,  134,  ...,  141,  142,  143],
         [ 144,  145,  146,  ...,  153,  154,  155],
         ...,
         [ 204,  205,  206,  ...,  213,  214,  215],
         [ 216,  217,  218,  ...,  225,  226,  227],
         [ 228,  229,  230,  ...,  237,  238,  239]],

        [[ 240,  241,  242,  ...,  249,  250,  251],
         [ 252,  253,  254,  ...,  261,  262,  263],
         [ 264,  265,  266,  ...,  273,  274,  275],
         ...,
         [ 324,  325,  326,  ...,  333,  334,  335],
         [ 336,  337,  338,  ...,  345,  346,  347],
         [ 348,  349,  350,  ...,  357,  358,  359]],

        ...,

        [[ 840,  841,  842,  ...,  849,  850,  851],
         [ 852,  853,  854,  ...,  861,  862,  863],
         [ 864,  865,  866,  ...,  873,  874,  875],
         ...,
         [ 924,  925,  926,  ...,  933,  934,  935],
         [ 936,  937,  938,  ...,  945,  946,  947],
         [ 948,  949,  950,  ...,  957,  958,  959]],

        [[ 960,  961,  962,  ...,  969,  970,  971],
         [ 972,  973,  974,  ...,  981,  982,  983],
         [ 984,  985,  986,  ...,  993,  994,  995],
         ...,
         [1044, 1045, 1046,  ..., 1053, 1054, 1055],
         [1056, 1057, 1058,  ..., 1065, 1066, 1067],
         [1068, 1069, 1070,  ..., 1077, 1078, 1079]],

        [[1080, 1081, 1082,  ..., 1089, 1090, 1091],
         [1092, 1093, 1094,  ..., 1101, 1102, 1103],
         [1104, 1105, 1106,  ..., 1113, 1114, 1115],
         ...,
         [1164, 1165, 1166,  ..., 1173, 1174, 1175],
         [1176, 1177, 1178,  ..., 1185, 1186, 1187],
         [1188, 1189, 1190,  ..., 1197, 1198, 1199]]], dtype=int64))T");
}

TEST(FormatTest, SummaryFormatIgnoresTheHiddenElements) {
  // Only the printed edges choose the format: hidden 0.5 and 1e-9 would switch modes.
  Tensor t = full({2000}, 2.0);
  t[1000].fill_(0.5);
  t[1001].fill_(1e-9);
  EXPECT_EQ(t.to_string(), "tensor([2., 2., 2.,  ..., 2., 2., 2.], dtype=float32)");
}

TEST(FormatTest, PrintingALargeExpandedViewIsCheap) {
  // 10^12 elements viewed through stride 0: only the edges may be visited.
  Tensor t = ones({1}).expand({1000000, 1000000});
  const std::string s = t.to_string();
  EXPECT_THAT(s, StartsWith("tensor([[1., 1., 1.,  ..., 1., 1., 1.],\n"
                            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"));
  EXPECT_THAT(s, HasSubstr("        ...,\n"));
}

// ---- fmt integration

TEST(FormatTest, FmtFormatsATensorLikeToString) {
  Tensor t = tensor({1.f, -2.5f}, {1, 2});
  EXPECT_EQ(fmt::format("{}", t), t.to_string());
  EXPECT_EQ(fmt::format("x = {}", scalar_tensor(2.0, kInt64)), "x = tensor(2, dtype=int64)");
  EXPECT_EQ(fmt::format("{}", Tensor()), Tensor().to_string());
}

TEST(FormatTest, FmtFormatsShapes) {
  EXPECT_EQ(fmt::format("{}", Shape{2, 3}), "(2, 3)");
  EXPECT_EQ(fmt::format("{}", Shape{7}), "(7)");
  EXPECT_EQ(fmt::format("{}", Shape{}), "()");
  EXPECT_EQ(fmt::format("{}", zeros({4, 0, 1}).shape()), "(4, 0, 1)");
}

TEST(FormatTest, FmtFormatsDTypes) {
  EXPECT_EQ(fmt::format("{}", kBFloat16), "bfloat16");
  EXPECT_EQ(
      fmt::format("{} {} {} {} {} {}", kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool),
      "float32 float64 float16 bfloat16 int64 bool");
}

TEST(FormatTest, ToStringOfUndefined) { EXPECT_EQ(Tensor().to_string(), "tensor(undefined)"); }

}  // namespace
}  // namespace tg
