// tests/examples/bug_zoo_test.cpp — the bug zoo of course chapter 19: each specimen is
// caught by the check the chapter names (and missed by the one it says misses it), and each
// repair passes them all. The Specimen tests run the broken kernels only; the Repair tests
// judge the exercise bug_zoo.repairs.
#include "examples/common/bug_zoo.h"

#include "ops/ops.h"
#include "test_util.h"

namespace tg::examples::zoo {
namespace {

using ::testing::HasSubstr;
using testing::leaf;

// ---------------------------------------------------------------- the specimens
TEST(BugZooSpecimen, GradcheckCatchesTheUnsummedBroadcast) {
  Generator gen(19);
  const GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) { return bias_add(in[0], in[1], Variant::kBroken); },
      {leaf({4, 3}, gen), leaf({3}, gen)});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failed, 3);  // every element of b, none of x
  EXPECT_THAT(r.message, HasSubstr("input 1"));
  // With one row there is nothing to sum: the bug hides. Check with more than one.
  EXPECT_TRUE(
      gradcheck(
          [](const std::vector<Tensor>& in) { return bias_add(in[0], in[1], Variant::kBroken); },
          {leaf({1, 3}, gen), leaf({3}, gen)})
          .ok);
}

TEST(BugZooSpecimen, TheOverwriteShowsOnlyWhenAnIdRepeats) {
  Generator gen(19);
  const Tensor table = leaf({5, 2}, gen);
  auto with = [&](const Tensor& ids) {
    return gradcheck(
        [ids](const std::vector<Tensor>& in) { return gather_rows(in[0], ids, Variant::kBroken); },
        {table});
  };
  EXPECT_TRUE(with(tensor({4, 0, 2}, {3})).ok);  // distinct ids: it passes
  const GradcheckResult r = with(tensor({4, 0, 4, 2, 4}, {5}));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failed, 2);  // the two numbers of row 4, used three times
}

TEST(BugZooSpecimen, TheForgottenUpcastOverflowsWhereTheReferenceDoesNot) {
  // A row of 300s: 300^2 = 90000 > 65504, so the float16 sum is inf and y = x / inf = 0.
  const Tensor x = full({2, 4}, 300.0, kFloat16);
  const Tensor reference = rms_norm(x, ones({4}, kFloat16));  // widens before squaring
  EXPECT_THAT(testing::as_doubles(reference), ::testing::Each(1.0));
  EXPECT_THAT(testing::as_doubles(rms_norm_f16(x, 1e-5, Variant::kBroken)), ::testing::Each(0.0));
  // Small values fit: the bug hides again. Test with values as large as real activations.
  const Tensor small = full({2, 4}, 3.0, kFloat16);
  EXPECT_THAT(testing::as_doubles(rms_norm_f16(small, 1e-5, Variant::kBroken)),
              ::testing::Each(::testing::DoubleNear(1.0, 1e-3)));
}

TEST(BugZooSpecimen, TheShiftedMaskPassesGradcheckButSeesTheFuture) {
  Generator gen(19);
  auto fn = [](const std::vector<Tensor>& in) {
    return causal_attention(in[0], in[1], in[2], Variant::kBroken);
  };
  // Forward and backward agree with each other: gradcheck has nothing to catch.
  EXPECT_GRADCHECK(fn, {leaf({1, 4, 2}, gen), leaf({1, 4, 2}, gen), leaf({1, 4, 2}, gen)});
  // The property catches it: changing key 2 changes the output of query 1.
  const Tensor q = randn({1, 4, 2}, kFloat64, gen), v = randn({1, 4, 2}, kFloat64, gen);
  const Tensor k = randn({1, 4, 2}, kFloat64, gen);
  Tensor k2 = k.clone();
  k2.data<double>()[2 * 2] += 1.0;  // key 2
  const Tensor a = causal_attention(q, k, v, Variant::kBroken);
  const Tensor b = causal_attention(q, k2, v, Variant::kBroken);
  EXPECT_NE(a.select(1, 1).to_vector<double>(), b.select(1, 1).to_vector<double>());
  // And the reference attention disagrees.
  const Tensor ref = scaled_dot_product_attention(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1),
                                                  {}, /*causal=*/true)
                         .squeeze(1);
  EXPECT_GT(amax(abs(sub(a, ref))).item<double>(), 1e-3);
}

TEST(BugZooSpecimen, BadInputIsRefusedByName) {
  EXPECT_TG_THROW(bias_add(zeros({2, 3}, kFloat64), zeros({2}, kFloat64), Variant::kBroken),
                  ShapeError, "zoo_bias_add", "(2, 3)", "(2)");
  EXPECT_TG_THROW(rms_norm_f16(zeros({2, 3}), 1e-5, Variant::kBroken), DTypeError,
                  "zoo_rms_norm_f16", "float32");
  EXPECT_TG_THROW(causal_attention(zeros({1, 2, 2}, kFloat64), zeros({1, 3, 2}, kFloat64),
                                   zeros({1, 2, 2}, kFloat64), Variant::kBroken),
                  ShapeError, "zoo_causal_attention", "(1, 3, 2)");
  EXPECT_TG_THROW(gather_rows(zeros({3, 2}, kFloat64), tensor({3}, {1}), Variant::kBroken),
                  IndexError, "embedding", "3");
}

// ---------------------------------------------------------------- the repairs
TEST(BugZooRepair, TheBiasGradientSumsOverTheRows) {
  Generator gen(20);
  EXPECT_GRADCHECK(
      [](const std::vector<Tensor>& in) { return bias_add(in[0], in[1], Variant::kRepaired); },
      {leaf({4, 3}, gen), leaf({3}, gen)});
}

TEST(BugZooRepair, RepeatedIdsAddTheirGradients) {
  Generator gen(20);
  const Tensor ids = tensor({4, 0, 4, 2, 4, 0}, {6});
  EXPECT_GRADCHECK(
      [ids](const std::vector<Tensor>& in) { return gather_rows(in[0], ids, Variant::kRepaired); },
      {leaf({5, 2}, gen)});
}

TEST(BugZooRepair, TheSumOfSquaresIsWidened) {
  Generator gen(20);
  const Tensor x = mul(randn({3, 16}, kFloat32, gen), 400.0).to(kFloat16);
  const Tensor mine = rms_norm_f16(x, 1e-5, Variant::kRepaired);
  const Tensor reference = rms_norm(x, ones({16}, kFloat16), 1e-5);
  // float16 keeps 11 bits: the two may differ by the last one, no more.
  const std::vector<double> a = testing::as_doubles(mine), b = testing::as_doubles(reference);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], std::abs(b[i]) * 0x1p-10) << i;
}

TEST(BugZooRepair, EachQuerySeesItselfAndThePast) {
  Generator gen(20);
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(visible(i, j, Variant::kRepaired), j <= i) << i << j;
  }
  const Tensor q = randn({2, 5, 3}, kFloat64, gen), k = randn({2, 5, 3}, kFloat64, gen);
  const Tensor v = randn({2, 5, 3}, kFloat64, gen);
  const Tensor ref = scaled_dot_product_attention(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1),
                                                  {}, /*causal=*/true)
                         .squeeze(1);
  EXPECT_THAT(testing::as_doubles(causal_attention(q, k, v, Variant::kRepaired)),
              ::testing::Pointwise(::testing::DoubleNear(1e-12), testing::as_doubles(ref)));
}

}  // namespace
}  // namespace tg::examples::zoo
