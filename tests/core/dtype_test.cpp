// tests/core/dtype_test.cpp — dtype names, sizes, dispatch and element conversion.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace {

using tg::convert;
using tg::DType;

TEST(DTypeTest, NamesAndSizesMatchPyTorch) {
  const std::vector<std::tuple<DType, std::string, size_t, bool>> table = {
      {tg::kFloat32, "float32", 4, true}, {tg::kFloat64, "float64", 8, true},
      {tg::kFloat16, "float16", 2, true}, {tg::kBFloat16, "bfloat16", 2, true},
      {tg::kInt64, "int64", 8, false},    {tg::kBool, "bool", 1, false}};
  for (const auto& [dt, name, size, floating] : table) {
    EXPECT_EQ(tg::dtype_name(dt), name);
    EXPECT_EQ(fmt::format("{}", dt), name);
    EXPECT_EQ(tg::element_size(dt), size) << name;
    EXPECT_EQ(tg::is_floating_point(dt), floating) << name;
  }
}

TEST(DTypeTest, VisitDTypeCallsWithTheMatchingCppType) {
  for (DType dt :
       {tg::kFloat32, tg::kFloat64, tg::kFloat16, tg::kBFloat16, tg::kInt64, tg::kBool}) {
    EXPECT_EQ(tg::visit_dtype(dt, []<class T>() { return tg::dtype_of<T>(); }), dt);
  }
  EXPECT_THROW(tg::visit_dtype(static_cast<DType>(42), []<class T>() { return 0; }), tg::Error);
}

TEST(DTypeTest, FloatToIntTruncatesTowardZeroAndSaturates) {
  EXPECT_EQ(convert<int64_t>(2.9), 2);
  EXPECT_EQ(convert<int64_t>(-2.9f), -2);
  EXPECT_EQ(convert<int64_t>(NAN), 0);
  EXPECT_EQ(convert<int64_t>(1e30), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(convert<int64_t>(-INFINITY), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(convert<int64_t>(9223372036854775808.0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(convert<int64_t>(-9223372036854775808.0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(convert<int64_t>(tg::Half(-3.5f)), -3);
}

TEST(DTypeTest, BoolConversions) {
  EXPECT_TRUE(convert<bool>(NAN));
  EXPECT_TRUE(convert<bool>(-0.5));
  EXPECT_FALSE(convert<bool>(-0.0));
  EXPECT_FALSE(convert<bool>(tg::BFloat16(0.0f)));
  EXPECT_TRUE(convert<bool>(int64_t{-7}));
  EXPECT_EQ(convert<float>(true), 1.0f);
  EXPECT_EQ(convert<int64_t>(false), 0);
  EXPECT_EQ(convert<tg::Half>(true).bits, 0x3c00);
}

TEST(DTypeTest, HalfConversionsRoundOnce) {
  EXPECT_EQ(convert<tg::Half>(int64_t{2049}).bits, tg::Half(2048.0f).bits);
  EXPECT_EQ(convert<tg::BFloat16>(tg::Half(65504.0f)).bits, tg::BFloat16(65504.0f).bits);
  EXPECT_EQ(convert<double>(tg::Half::from_bits(0x0001)), std::ldexp(1.0, -24));
  EXPECT_EQ(convert<tg::Half>(1e6).bits, 0x7c00);
}

}  // namespace
