// tests/nn/distributed/ddp_mpi_test.cpp — DistributedDataParallel across processes: run
// under `mpirun --oversubscribe -np P` (tests/CMakeLists.txt runs it with P = 2 and 3). Every
// rank runs every test, in the same order, since each is a sequence of collectives.
//
// Tolerances: the models are float64. One process sums a batch's per-sample gradients in one
// order; P ranks sum their shards and MPI sums the P results, so the same terms are added in
// another order: each gradient differs by a few ulp (~1e-16 relative). Five steps of SGD or
// AdamW carry that into the parameters without growing it past ~1e-14; 1e-12 leaves room and
// would still catch one wrong sample (~1e-2) or a sum where an average belongs (~1e-1).
// Buckets with and without overlap: each element is the same sum of P values, so for P = 2
// (a + b = b + a) the bits must agree exactly; for P > 2 MPI may choose another reduction
// order for another message size, so there the bound is 1e-15 per step.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "ddp_support.h"
#include "nn/distributed/ddp.h"

namespace tg::distributed {
namespace {

using testing_ddp::Branchy;
using testing_ddp::flat_grads;
using testing_ddp::flat_values;
using testing_ddp::make_data;
using testing_ddp::max_abs_diff;
using testing_ddp::shard;

constexpr double kTolerance = 1e-12;

TEST(ProcessGroupMpiTest, AllReduceSumsAveragesAndTakesTheMax) {
  const int r = rank(), p = world_size();
  ASSERT_GE(p, 2) << "run this under mpirun -np 2 or more";
  Tensor t = tensor(std::vector<double>{static_cast<double>(r), 1});
  all_reduce(t, ReduceOp::Sum);
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{p * (p - 1) / 2.0, double(p)}));
  Tensor a = tensor(std::vector<float>{static_cast<float>(r)});
  all_reduce(a, ReduceOp::Average);
  EXPECT_FLOAT_EQ(a.item<float>(), (p - 1) / 2.0f);
  Tensor m = tensor(std::vector<int64_t>{r, -r});
  all_reduce(m, ReduceOp::Max);
  EXPECT_EQ(m.to_vector<int64_t>(), (std::vector<int64_t>{p - 1, 0}));
  EXPECT_EQ(all_reduce(static_cast<double>(r + 1), ReduceOp::Sum), p * (p + 1) / 2.0);
  EXPECT_TRUE(any(r == p - 1));
  EXPECT_FALSE(any(false));
  barrier();
}

TEST(ProcessGroupMpiTest, BroadcastCopiesTheRootsTensor) {
  const int r = rank();
  Tensor t = tensor(std::vector<float>{float(r), float(10 * r)});
  broadcast(t, 1);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 10}));
}

TEST(DdpMpiTest, EveryRankStartsFromRankZerosWeights) {
  Branchy model(100 + static_cast<uint64_t>(rank()));  // a different init on every rank
  DistributedDataParallel ddp(model);
  EXPECT_EQ(flat_values(model), flat_values(Branchy(100)));
}

// Trains `steps` steps data-parallel (this rank's shard of each global batch) and, beside it in
// this process, the same model on the whole global batch; returns the largest difference of
// their parameters.
template <class Opt, class Options>
double train_both(const Options& options, int steps, DdpOptions ddp_options = {}) {
  const int r = rank(), p = world_size();
  Branchy single(7), parallel(7);
  DistributedDataParallel ddp(parallel, ddp_options);
  Opt opt_single(single.parameters(), options), opt_parallel(parallel.parameters(), options);
  for (int step = 0; step < steps; ++step) {
    const auto d = make_data(4 * p, 1000 + static_cast<uint64_t>(step));  // global batch
    opt_single.zero_grad();
    cross_entropy(single(d.x), d.y).backward();
    opt_single.step();
    const auto mine = shard(d, r, p);
    opt_parallel.zero_grad();
    cross_entropy(parallel(mine.x), mine.y).backward();  // .grad: the average over the ranks
    opt_parallel.step();
  }
  return max_abs_diff(flat_values(single), flat_values(parallel));
}

TEST(DdpMpiTest, SgdOnShardsMatchesOneProcessOnTheGlobalBatch) {
  EXPECT_LE((train_both<nn::SGD>(nn::SGDOptions{.lr = 0.1, .momentum = 0.9}, 5)), kTolerance);
}

TEST(DdpMpiTest, AdamWOnShardsMatchesOneProcessOnTheGlobalBatch) {
  EXPECT_LE((train_both<nn::AdamW>(nn::AdamWOptions{.lr = 0.01, .weight_decay = 0.1}, 5)),
            kTolerance);
}

TEST(DdpMpiTest, ManySmallBucketsSentDuringBackwardMatchOneAllReduceAtTheEnd) {
  const int r = rank(), p = world_size();
  Branchy overlapped(3), at_end(3);
  DistributedDataParallel many(overlapped, {.bucket_cap_bytes = 64, .overlap = true});
  DistributedDataParallel one(at_end, {.bucket_cap_bytes = int64_t{1} << 30, .overlap = false});
  ASSERT_GT(many.buckets().size(), 4u);
  ASSERT_EQ(one.buckets().size(), 1u);
  nn::SGD opt_a(overlapped.parameters(), {.lr = 0.1}), opt_b(at_end.parameters(), {.lr = 0.1});
  for (int step = 0; step < 3; ++step) {
    const auto d = shard(make_data(4 * p, 50 + static_cast<uint64_t>(step)), r, p);
    opt_a.zero_grad();
    opt_b.zero_grad();
    cross_entropy(overlapped(d.x), d.y).backward();
    cross_entropy(at_end(d.x), d.y).backward();
    if (p == 2) {
      EXPECT_EQ(flat_grads(overlapped), flat_grads(at_end)) << "step " << step;
    } else {
      EXPECT_LE(max_abs_diff(flat_grads(overlapped), flat_grads(at_end)), 1e-15) << step;
    }
    opt_a.step();
    opt_b.step();
  }
  EXPECT_EQ(many.stats().syncs, 3);
}

TEST(DdpMpiTest, AParameterUnusedOnSomeRanksAveragesAsZeroAndOneUnusedEverywhereKeepsNoGrad) {
  const int r = rank(), p = world_size();
  Branchy model(5), alone(5);
  DistributedDataParallel ddp(model);
  const auto d = shard(make_data(2 * p, 9), r, p);
  // Only rank 0's forward takes the side branch.
  cross_entropy(model(d.x, /*use_side=*/r == 0), d.y).backward();
  // Rank 0's side gradient, computed alone, then shared so every rank can check.
  const auto d0 = shard(make_data(2 * p, 9), 0, p);
  cross_entropy(alone(d0.x, true), d0.y).backward();
  for (const auto& [name, param] : model.named_parameters()) {
    if (name.starts_with("never")) {
      EXPECT_FALSE(param.grad().defined()) << name << ": no rank used it";
    } else if (name.starts_with("side")) {
      ASSERT_TRUE(param.grad().defined()) << name;
      Tensor expected;
      for (const auto& [n2, q] : alone.named_parameters()) {
        if (n2 == name) expected = q.grad();
      }
      const auto got = param.grad().to_vector<double>();
      auto want = expected.to_vector<double>();
      for (double& v : want) v /= p;  // rank 0's gradient and P - 1 zeros, averaged
      EXPECT_LE(max_abs_diff(got, want), kTolerance) << name;
    }
  }
}

TEST(DdpMpiTest, NoSyncMicroStepsThenOneSyncAverageTheAccumulatedSums) {
  const int r = rank(), p = world_size();
  Branchy model(11), reference(11);
  DistributedDataParallel ddp(model);
  const auto first = make_data(2 * p, 21), second = make_data(2 * p, 22);
  {
    auto quiet = ddp.no_sync();
    cross_entropy(model(shard(first, r, p).x), shard(first, r, p).y).backward();
  }
  cross_entropy(model(shard(second, r, p).x), shard(second, r, p).y).backward();
  EXPECT_EQ(ddp.stats().syncs, 1);
  // The same sums, one rank's shard at a time, in this process: (1/P) sum over ranks of both
  // micro-steps' gradients.
  for (int q = 0; q < p; ++q) {
    cross_entropy(reference(shard(first, q, p).x), shard(first, q, p).y).backward();
    cross_entropy(reference(shard(second, q, p).x), shard(second, q, p).y).backward();
  }
  auto want = flat_grads(reference);
  for (double& v : want) v /= p;
  EXPECT_LE(max_abs_diff(flat_grads(model), want), kTolerance);
}

}  // namespace
}  // namespace tg::distributed

namespace {
// What the ranks other than 0 print: their failures, named by rank.
class FailuresOnly : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::printf("[rank %d of %d] %s:%d: failure\n%s\n", tg::distributed::rank(),
                tg::distributed::world_size(), result.file_name() ? result.file_name() : "?",
                result.line_number(), result.summary());
  }
};
}  // namespace

// Each rank runs the same tests; rank 0 prints them, the others only their failures. A
// failure on any rank makes that rank exit non-zero, and mpirun with it.
int main(int argc, char** argv) {
  tg::distributed::Session session(argc, argv);
  tg::distributed::set_timeout_seconds(60);  // a test that desynchronises the ranks fails soon
  ::testing::InitGoogleTest(&argc, argv);
  if (tg::distributed::rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailuresOnly);
  }
  return RUN_ALL_TESTS();
}
