// tests/nn/distributed/buckets_test.cpp — assign_buckets: the buckets of gradients that
// DistributedDataParallel all-reduces together (the exercise of chapter 25).
#include "nn/distributed/buckets.h"

#include "test_util.h"

namespace tg::distributed {
namespace {

using Buckets = std::vector<std::vector<size_t>>;

TEST(BucketsTest, FillsFromTheLastParameterAndClosesABucketOnceItReachesTheCap) {
  // The example of buckets.h: 400 + 40 bytes stay under 1000, the 4000 of parameter 2 takes
  // bucket 0 past it and closes it; parameters 1 and 0 are the rest.
  EXPECT_EQ(assign_buckets({400, 40, 4000, 40, 400}, 1000), (Buckets{{4, 3, 2}, {1, 0}}))
      << "walk i from the last parameter down to 0; add bytes[i] to the open bucket; close it "
         "when it holds cap_bytes or more";
}

TEST(BucketsTest, ReachingTheCapExactlyClosesTheBucket) {
  EXPECT_EQ(assign_buckets({300, 300, 300}, 600), (Buckets{{2, 1}, {0}}))
      << "600 bytes with a cap of 600 is full: the test is >=, not >";
  EXPECT_EQ(assign_buckets({500, 500}, 500), (Buckets{{1}, {0}}));
}

TEST(BucketsTest, ATinyCapGivesEachParameterItsOwnBucketAndAHugeOneASingleBucket) {
  EXPECT_EQ(assign_buckets({4, 8, 12}, 1), (Buckets{{2}, {1}, {0}}));
  EXPECT_EQ(assign_buckets({4, 8, 12}, int64_t{1} << 40), (Buckets{{2, 1, 0}}))
      << "what is left under the cap at the end is the last bucket";
}

TEST(BucketsTest, EveryParameterLandsInExactlyOneBucket) {
  const std::vector<int64_t> bytes = {16, 0, 4096, 4, 4, 1024, 0, 65536, 12};
  const Buckets b = assign_buckets(bytes, 1000);
  std::vector<size_t> seen;
  for (const auto& bucket : b) {
    EXPECT_FALSE(bucket.empty()) << "an empty bucket would be an all-reduce of nothing";
    seen.insert(seen.end(), bucket.begin(), bucket.end());
  }
  // In the order they were added: from the last index down to 0.
  EXPECT_EQ(seen, (std::vector<size_t>{8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(b, (Buckets{{8, 7}, {6, 5}, {4, 3, 2}, {1, 0}}));
}

TEST(BucketsTest, NoParametersNoBuckets) { EXPECT_TRUE(assign_buckets({}, 100).empty()); }

TEST(BucketsTest, ACapBelowOneByteOrANegativeSizeIsAValueError) {
  EXPECT_TG_THROW(assign_buckets({4}, 0), ValueError, "assign_buckets", "at least 1 byte", "got 0");
  EXPECT_TG_THROW(assign_buckets({4, -8}, 100), ValueError, "parameter 1", "negative size (-8)");
}

}  // namespace
}  // namespace tg::distributed
