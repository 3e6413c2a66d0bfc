// tests/nn/distributed/ddp_test.cpp — the process group and DistributedDataParallel in one
// process (no mpirun): a world of one, where averaging over the ranks must change nothing.
// The multi-process tests are in ddp_mpi_test.cpp, run under mpirun.
#include "nn/distributed/ddp.h"

#include "ddp_support.h"
#include "test_util.h"

namespace tg::distributed {
namespace {

using testing_ddp::Branchy;
using testing_ddp::flat_grads;
using testing_ddp::make_data;

TEST(ProcessGroupTest, WithoutMpirunItIsAWorldOfOne) {
  EXPECT_EQ(rank(), 0);
  EXPECT_EQ(world_size(), 1);
  Tensor t = tensor(std::vector<double>{1.5, -2});
  all_reduce(t, ReduceOp::Sum);
  EXPECT_EQ(testing::as_doubles(t), (std::vector<double>{1.5, -2}));
  all_reduce(t, ReduceOp::Average);
  EXPECT_EQ(testing::as_doubles(t), (std::vector<double>{1.5, -2}));
  Work w = iall_reduce(t, ReduceOp::Max);
  w.wait();
  EXPECT_TRUE(w.done());
  broadcast(t, 0);
  barrier();
  EXPECT_TRUE(any(true));
  EXPECT_FALSE(any(false));
  EXPECT_EQ(all_reduce(2.5, ReduceOp::Average), 2.5);
}

TEST(ProcessGroupTest, BadTensorsAndRootsAreNamed) {
  Tensor m = tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
  Tensor mt = m.t();
  EXPECT_TG_THROW(all_reduce(mt, ReduceOp::Sum), ValueError, "all_reduce", "shape (2, 2)",
                  "not contiguous");
  Tensor flags = tensor(std::vector<bool>{true});
  EXPECT_TG_THROW(all_reduce(flags, ReduceOp::Max), DTypeError, "all_reduce", "got bool");
  Tensor counts = tensor(std::vector<int64_t>{3});
  EXPECT_TG_THROW(all_reduce(counts, ReduceOp::Average), DTypeError, "average of int64");
  Tensor t = tensor(std::vector<float>{1});
  EXPECT_TG_THROW(broadcast(t, 1), IndexError, "broadcast", "root 1", "(0 .. 0)");
  EXPECT_TG_THROW(set_timeout_seconds(0), ValueError, "timeout must be positive", "got 0");
}

// One training step's gradients of `model` on (x, y).
void backward_on(Branchy& model, const testing_ddp::Data& d, bool use_side = true) {
  cross_entropy(model(d.x, use_side), d.y).backward();
}

TEST(DdpTest, InAWorldOfOneTheGradientsAreThoseOfPlainBackward) {
  Branchy plain(1), wrapped(1);
  DistributedDataParallel ddp(wrapped, {.bucket_cap_bytes = 64});  // a bucket per parameter or two
  EXPECT_GT(ddp.buckets().size(), 4u);
  const auto d = make_data(6, 2);
  for (int step = 0; step < 2; ++step) {
    backward_on(plain, d);
    backward_on(wrapped, d);
  }
  // Copied into the buckets, averaged over one rank, copied back: the same bits.
  EXPECT_EQ(flat_grads(wrapped), flat_grads(plain));
  EXPECT_EQ(ddp.stats().syncs, 2);
  EXPECT_EQ(ddp.stats().bytes, wrapped.num_parameters() * 8);
}

TEST(DdpTest, NoSyncOnlyAccumulates) {
  Branchy model(1);
  DistributedDataParallel ddp(model);
  const auto d = make_data(4, 3);
  {
    auto guard = ddp.no_sync();
    backward_on(model, d);
  }
  EXPECT_EQ(ddp.stats().syncs, 0);
  backward_on(model, d);
  EXPECT_EQ(ddp.stats().syncs, 1);
  Branchy twice(1);
  backward_on(twice, d);
  backward_on(twice, d);
  EXPECT_EQ(flat_grads(model), flat_grads(twice));
}

TEST(DdpTest, AParameterNoBackwardReachedKeepsNoGradient) {
  Branchy model(1);
  DistributedDataParallel ddp(model);
  backward_on(model, make_data(4, 3), /*use_side=*/false);
  for (const auto& [name, p] : model.named_parameters()) {
    const bool used = name.starts_with("body") || name.starts_with("head");
    EXPECT_EQ(p.grad().defined(), used) << name;
  }
}

TEST(DdpTest, AModuleWithoutParametersOrWithMixedDtypesIsRefused) {
  nn::Sequential empty;
  EXPECT_TG_THROW(DistributedDataParallel{empty}, ValueError, "DistributedDataParallel",
                  "no parameters");
  nn::Sequential mixed;
  mixed.emplace_back<nn::Linear>(2, 2);
  mixed.emplace_back<nn::Linear>(2, 2, nn::LinearOptions{.dtype = kFloat64});
  EXPECT_TG_THROW(DistributedDataParallel{mixed}, DTypeError, "all float32 or all float64",
                  "parameter 2 is float64", "parameter 0 is float32");
}

TEST(DdpTest, OnceTheWrapperIsGoneTheHooksDoNothing) {
  Branchy model(1), plain(1);
  { DistributedDataParallel ddp(model); }
  const auto d = make_data(4, 3);
  backward_on(model, d);
  backward_on(plain, d);
  EXPECT_EQ(flat_grads(model), flat_grads(plain));
}

}  // namespace
}  // namespace tg::distributed
