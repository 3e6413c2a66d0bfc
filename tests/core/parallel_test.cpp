// tests/core/parallel_test.cpp — parallel_for covers every item exactly once, on as many
// threads as asked, never in pieces smaller than the grain; the thread count is checked.
#include "core/parallel.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "test_util.h"

namespace tg {
namespace {

using Pieces = std::vector<std::pair<int64_t, int64_t>>;

Pieces pieces_of(int64_t n, int64_t grain) {
  Pieces out;
  std::mutex m;
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(m);
    out.emplace_back(begin, end);
  });
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ParallelFor, PiecesCoverTheRangeExactlyOnce) {
  for (int threads : {1, 2, 3, 7}) {
    NumThreadsGuard guard(threads);
    for (int64_t n : {1, 2, 5, 64, 1000, 1001}) {
      const Pieces p = pieces_of(n, 1);
      ASSERT_FALSE(p.empty());
      EXPECT_EQ(p.front().first, 0);
      EXPECT_EQ(p.back().second, n);
      for (size_t i = 1; i < p.size(); ++i) EXPECT_EQ(p[i - 1].second, p[i].first);
      EXPECT_EQ(static_cast<int64_t>(p.size()), std::min<int64_t>(threads, n))
          << threads << " threads, n = " << n;
    }
  }
}

TEST(ParallelFor, NoPieceIsSmallerThanTheGrain) {
  NumThreadsGuard guard(4);
  EXPECT_EQ(pieces_of(99, 50).size(), 1u);   // two pieces would be 49 + 50
  EXPECT_EQ(pieces_of(100, 50).size(), 2u);  // exactly two of 50
  for (const auto& [begin, end] : pieces_of(1000, 300)) EXPECT_GE(end - begin, 300);
  EXPECT_TRUE(pieces_of(0, 1).empty());  // nothing to do: body never called
}

TEST(ParallelFor, RunsOnDistinctThreads) {
  NumThreadsGuard guard(2);
  std::mutex m;
  std::set<int> ids;
  parallel_for(2, 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(m);
    ids.insert(omp_get_thread_num());
  });
  EXPECT_EQ(ids.size(), 2u);
}

// OpenMP (GNU libgomp) ends the threads that a smaller team leaves out and creates them again
// for the next bigger team. Regions of 4 and of 2 pieces, one after the other, must keep
// running on the same 4 threads, not on new ones each time.
TEST(ParallelFor, FewerPiecesThanThreadsStartNoNewThreads) {
  NumThreadsGuard guard(4);
  std::mutex m;
  std::set<pid_t> threads;
  const auto record = [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(m);
    threads.insert(gettid());
  };
  for (int round = 0; round < 20; ++round) {
    parallel_for(4, 1, record);  // 4 pieces
    parallel_for(2, 1, record);  // 2 pieces
  }
  EXPECT_LE(threads.size(), 4u) << "threads were ended and started again between regions";
}

TEST(ParallelFor, NestedLoopRunsSerially) {
  NumThreadsGuard guard(2);
  std::atomic<int> inner_pieces{0};
  parallel_for(2, 1, [&](int64_t, int64_t) {
    parallel_for(100, 1, [&](int64_t begin, int64_t end) {
      EXPECT_EQ(begin, 0);
      EXPECT_EQ(end, 100);
      ++inner_pieces;
    });
  });
  EXPECT_EQ(inner_pieces.load(), 2);
}

TEST(ParallelFor, ExceptionReachesTheCaller) {
  NumThreadsGuard guard(2);
  EXPECT_THROW(parallel_for(10, 1,
                            [](int64_t begin, int64_t) {
                              if (begin > 0) throw std::invalid_argument("second piece");
                            }),
               std::invalid_argument);
}

TEST(NumThreads, GuardRestoresAndBadCountsAreRefused) {
  const int before = num_threads();
  EXPECT_GE(before, 1);
  {
    NumThreadsGuard guard(3);
    EXPECT_EQ(num_threads(), 3);
  }
  EXPECT_EQ(num_threads(), before);
  EXPECT_TG_THROW(set_num_threads(0), ValueError, "set_num_threads: n must be at least 1, got 0");
  EXPECT_EQ(num_threads(), before);
}

TEST(NumThreads, FollowsTheEnvironment) {
  // CTest runs this test again with TAPEGRAD_NUM_THREADS=3 and with =two (see
  // tests/CMakeLists.txt); run plainly, it checks the default: one per processor.
  const char* value = std::getenv("TAPEGRAD_NUM_THREADS");
  if (value == nullptr) {
    EXPECT_EQ(num_threads(), std::max(1, omp_get_num_procs()));
  } else if (std::string(value) == "3") {
    EXPECT_EQ(num_threads(), 3);
  } else {
    EXPECT_TG_THROW(num_threads(), ValueError, "TAPEGRAD_NUM_THREADS", value);
  }
}

}  // namespace
}  // namespace tg
