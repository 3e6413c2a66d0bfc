// tests/ops/compute_test.cpp — ops/compute.h, the boundary every fused op crosses: which
// compute type, when a tensor is aliased and when copied, and that rounding happens once.
// (Not a differentiable op: no gradcheck or fixture applies; the ops' own tests and their
// half-type fixtures exercise it end to end.)
#include "ops/compute.h"

#include "test_util.h"

namespace tg {
namespace {

using detail::as_compute;
using detail::compute_type;
using detail::round_to;
using testing::as_doubles;

/// True when a and b (float32) start at the same element: one is an alias of the other.
bool aliases(const Tensor& a, const Tensor& b) { return a.data<float>() == b.data<float>(); }

TEST(ComputeTest, HalfTypesComputeInFloat32AndFloat64InDouble) {
  EXPECT_EQ(compute_type(kFloat64), kFloat64);
  EXPECT_EQ(compute_type(kFloat32), kFloat32);
  EXPECT_EQ(compute_type(kFloat16), kFloat32);
  EXPECT_EQ(compute_type(kBFloat16), kFloat32);
}

TEST(ComputeTest, AsComputeAliasesOnlyAContiguousTensorOfTheRightType) {
  const Tensor x = tensor({1.f, 2.f, 3.f, 4.f}, {2, 2});
  EXPECT_TRUE(aliases(as_compute(x, kFloat32), x));  // no copy
  const Tensor t = as_compute(x.t(), kFloat32);      // strided: a contiguous copy
  EXPECT_FALSE(aliases(t, x));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(as_doubles(t), (std::vector<double>{1, 3, 2, 4}));
  const Tensor h = as_compute(x.to(kFloat16), kFloat32);  // widened exactly
  EXPECT_EQ(h.dtype(), kFloat32);
  EXPECT_EQ(as_doubles(h), as_doubles(x));
  EXPECT_FALSE(as_compute(Tensor(), kFloat32).defined());  // an absent weight stays absent
}

TEST(ComputeTest, RoundToRoundsOnceToNearestEven) {
  // 1 + 2^-11 lies exactly between two float16 neighbours (1 and 1 + 2^-10): ties go to
  // the even one, 1. 1 + 3 * 2^-12 rounds up to 1 + 2^-10.
  const Tensor y = tensor({1.0 + std::ldexp(1.0, -11), 1.0 + 3 * std::ldexp(1.0, -12)});
  const Tensor r = round_to(y.to(kFloat32), kFloat16);
  EXPECT_EQ(r.dtype(), kFloat16);
  EXPECT_EQ(as_doubles(r), (std::vector<double>{1.0, 1.0 + std::ldexp(1.0, -10)}));
  const Tensor same = tensor({1.f});
  EXPECT_TRUE(aliases(round_to(same, kFloat32), same));
}

TEST(ComputeTest, RoundToKeepsTheLayoutOfADenseView) {
  // Attention's gradients are laid out (B, T, H, D) and seen as (B, H, T, D): rounded, they
  // keep that layout, so the transpose that made the view undoes it without a copy.
  std::vector<double> values;
  for (int i = 0; i < 2 * 5 * 3 * 4; ++i) values.push_back(1.0 + i / 7.0);
  const Tensor t = tensor(values).to(kFloat32).view({2, 5, 3, 4}).transpose(1, 2);
  const Tensor r = round_to(t, kBFloat16);
  EXPECT_EQ(r.strides(), t.strides());
  EXPECT_TRUE(r.transpose(1, 2).is_contiguous());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const DimVec at{i / 60, i / 20 % 3, i / 4 % 5, i % 4};
    ASSERT_EQ(float(r.at<BFloat16>(at)), float(BFloat16(t.at<float>(at)))) << i;
  }
  // A view with gaps (half of each row) is rounded into new contiguous memory.
  const Tensor part = tensor(values).to(kFloat32).view({10, 12}).narrow(1, 0, 6);
  const Tensor rp = round_to(part, kBFloat16);
  EXPECT_TRUE(rp.is_contiguous());
  EXPECT_EQ(float(rp.at<BFloat16>({9, 5})), float(BFloat16(part.at<float>({9, 5}))));
}

}  // namespace
}  // namespace tg
