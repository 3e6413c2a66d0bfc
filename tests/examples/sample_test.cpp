// tests/examples/sample_test.cpp — tiny_lm's sampler (examples/common/sample.h, the exercise
// tiny_lm.sample): the most likely character at temperature 0, the softmax of logits /
// temperature over the top k otherwise, measured as frequencies over many seeded draws, so
// that a sampler that ignores the temperature, keeps one character too many or too few, or
// overflows on large logits fails; top-p's nucleus, by hand and in the draws; and the context
// window, where an off-by-one fails.
#include "examples/common/sample.h"

#include <cmath>
#include <vector>

#include "test_util.h"

namespace tg::examples {
namespace {

// How often each index comes out of `draws` calls, as fractions.
std::vector<double> frequencies(const std::vector<double>& logits, double temperature,
                                int64_t top_k, int draws = 40000) {
  Generator gen(123);
  std::vector<double> count(logits.size(), 0.0);
  for (int i = 0; i < draws; ++i) {
    const size_t next = sample_next(logits, temperature, top_k, gen);
    EXPECT_LT(next, logits.size());
    if (next < logits.size()) count[next] += 1;
  }
  for (double& c : count) c /= draws;
  return count;
}

// softmax(logits / temperature) over the top_k largest (all when top_k is 0).
std::vector<double> expected(const std::vector<double>& logits, double temperature,
                             size_t top_k = 0) {
  std::vector<double> sorted = logits;
  std::sort(sorted.rbegin(), sorted.rend());
  const double cut = top_k > 0 && top_k < logits.size() ? sorted[top_k - 1] : sorted.back();
  std::vector<double> p(logits.size(), 0.0);
  double z = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] >= cut) z += p[i] = std::exp((logits[i] - sorted[0]) / temperature);
  }
  for (double& v : p) v /= z;
  return p;
}

// 40000 draws: a frequency's standard deviation is at most 0.0025; 0.012 is about 5 of them.
constexpr double kTol = 0.012;

const std::vector<double> kLogits = {std::log(0.2), std::log(0.5), std::log(0.3)};

TEST(SampleNext, TemperatureZeroTakesTheMostLikelyAndDrawsNothing) {
  Generator gen(5);
  const uint64_t before = gen.offset();
  EXPECT_EQ(sample_next(kLogits, 0.0, 0, gen), 1u);
  EXPECT_EQ(sample_next({3.0, -1.0, 7.5, 7.0}, 0.0, 2, gen), 2u);
  EXPECT_EQ(gen.offset(), before) << "temperature 0 must not use the generator";
}

TEST(SampleNext, TopKOfOneTakesTheMostLikelyAtAnyTemperature) {
  for (double t : {0.5, 1.0, 3.0}) {
    EXPECT_THAT(frequencies(kLogits, t, 1, 2000), ::testing::ElementsAre(0.0, 1.0, 0.0)) << t;
  }
}

TEST(SampleNext, FollowsTheSoftmaxOfTheLogitsAtTemperatureOne) {
  EXPECT_THAT(frequencies(kLogits, 1.0, 0),
              ::testing::Pointwise(::testing::DoubleNear(kTol), expected(kLogits, 1.0)));
}

TEST(SampleNext, TheTemperatureDividesTheLogits) {
  // Temperature 2 flattens (0.2, 0.5, 0.3) to (0.263, 0.416, 0.322); 0.5 sharpens it to
  // (0.105, 0.658, 0.237). A sampler that ignores the temperature is off by 0.08 or more.
  for (double t : {2.0, 0.5}) {
    EXPECT_THAT(frequencies(kLogits, t, 0),
                ::testing::Pointwise(::testing::DoubleNear(kTol), expected(kLogits, t)))
        << "temperature " << t;
  }
}

TEST(SampleNext, TopKKeepsExactlyTheKMostLikely) {
  // k = 2 keeps 0.5 and 0.3, renormalised to 0.625 and 0.375; the 0.2 never comes out.
  const std::vector<double> f = frequencies(kLogits, 1.0, 2);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_THAT(f, ::testing::Pointwise(::testing::DoubleNear(kTol), expected(kLogits, 1.0, 2)));
  // A k of the vocabulary's size or more keeps everything.
  EXPECT_THAT(frequencies(kLogits, 1.0, 3),
              ::testing::Pointwise(::testing::DoubleNear(kTol), expected(kLogits, 1.0)));
  EXPECT_THAT(frequencies(kLogits, 1.0, 50),
              ::testing::Pointwise(::testing::DoubleNear(kTol), expected(kLogits, 1.0)));
}

TEST(SampleNext, LargeLogitsDoNotOverflow) {
  // exp(1000) is inf in double: the largest logit must be subtracted before the exp.
  const std::vector<double> big = {1000.0, 0.0, 999.0};
  EXPECT_THAT(frequencies(big, 1.0, 0),
              ::testing::Pointwise(::testing::DoubleNear(kTol), expected(big, 1.0)));
}

TEST(SampleNext, TheSameSeedGivesTheSameCharacters) {
  Generator a(9), b(9);
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(sample_next(kLogits, 0.8, 0, a), sample_next(kLogits, 0.8, 0, b)) << i;
  }
}

// ---------------------------------------------------------------- top-p
// The logits of (0.05, 0.4, 0.1, 0.3, 0.15): sorted, the running sums are 0.4, 0.7, 0.85,
// 0.95, 1.
const std::vector<double> kFive = {std::log(0.05), std::log(0.4), std::log(0.1), std::log(0.3),
                                   std::log(0.15)};

TEST(NucleusSize, TheFewestMostLikelyWhoseSumReachesTopP) {
  EXPECT_EQ(nucleus_size(kFive, 1.0, 0, 0.3), 1);   // 0.4 >= 0.3
  EXPECT_EQ(nucleus_size(kFive, 1.0, 0, 0.5), 2);   // 0.4 < 0.5 <= 0.7
  EXPECT_EQ(nucleus_size(kFive, 1.0, 0, 0.8), 3);   // 0.7 < 0.8 <= 0.85
  EXPECT_EQ(nucleus_size(kFive, 1.0, 0, 0.9), 4);   // 0.85 < 0.9 <= 0.95
  EXPECT_EQ(nucleus_size(kFive, 1.0, 0, 0.99), 5);  // all of them
  EXPECT_EQ(nucleus_size(kFive, 1.0, 0, 1.0), 5);
  // top_p = 1 keeps the top_k; temperature 0 keeps one.
  EXPECT_EQ(nucleus_size(kFive, 1.0, 3, 1.0), 3);
  EXPECT_EQ(nucleus_size(kFive, 0.0, 0, 0.9), 1);
  EXPECT_EQ(nucleus_size({2.0}, 1.0, 0, 0.5), 1);
}

TEST(NucleusSize, AppliesAfterTemperatureAndTopK) {
  // Top-k 3 renormalises (0.4, 0.3, 0.15) to (0.47, 0.35, 0.18): 0.8 needs 2 of them, where
  // over all five it needed 3.
  EXPECT_EQ(nucleus_size(kFive, 1.0, 3, 0.8), 2);
  // Temperature 0.25 raises the probabilities to the 4th power: 0.4^4 is 0.73 of the total,
  // so 0.7 needs only the first; at temperature 4 the distribution flattens and 0.7 needs 4.
  EXPECT_EQ(nucleus_size(kFive, 0.25, 0, 0.7), 1);
  EXPECT_EQ(nucleus_size(kFive, 4.0, 0, 0.7), 4);
  // Logits near 1000 do not overflow.
  EXPECT_EQ(nucleus_size({1000.0, 999.0, 0.0}, 1.0, 0, 0.6), 1);
  EXPECT_EQ(nucleus_size({1000.0, 999.0, 0.0}, 1.0, 0, 0.9), 2);
}

TEST(NucleusSize, DrawsFollowTheRenormalisedNucleus) {
  // top_p 0.5 keeps 0.4 and 0.3: drawn 0.571 and 0.429 of the time, the rest never.
  const int64_t k = nucleus_size(kFive, 1.0, 0, 0.5);
  const std::vector<double> f = frequencies(kFive, 1.0, k);
  EXPECT_THAT(
      f, ::testing::Pointwise(::testing::DoubleNear(kTol), {0.0, 0.4 / 0.7, 0.0, 0.3 / 0.7, 0.0}));
  EXPECT_EQ(f[0] + f[2] + f[4], 0.0);
}

TEST(ContextWindow, KeepsTheLastContextLengthIdsOldestFirst) {
  const std::vector<int64_t> ids = {10, 11, 12, 13, 14, 15};
  EXPECT_EQ(context_window(ids, 4), (std::vector<int64_t>{12, 13, 14, 15}));
  EXPECT_EQ(context_window(ids, 6), ids);   // exactly the context: all of it
  EXPECT_EQ(context_window(ids, 50), ids);  // a short prompt: all of it
  EXPECT_EQ(context_window(ids, 1), (std::vector<int64_t>{15}));
  EXPECT_EQ(context_window({7}, 3), (std::vector<int64_t>{7}));
}

}  // namespace
}  // namespace tg::examples
