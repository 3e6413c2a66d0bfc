// tests/nn/distributed/ddp_failure.cpp — a data-parallel training loop in which one rank fails
// on purpose at step 2, for the tests that the others then stop with an error instead of
// waiting forever (tests/CMakeLists.txt runs it under mpirun):
//
//   ddp_failure --fail-rank R --mode throw   rank R throws a tg::Error; main catches it and
//                                             calls abort(), as the examples do (MPI_Abort)
//   ddp_failure --fail-rank R --mode hang    rank R sleeps; the others' all-reduce gives up
//                                             after TAPEGRAD_DIST_TIMEOUT seconds
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "ddp_support.h"
#include "nn/distributed/ddp.h"

int main(int argc, char** argv) {
  namespace dist = tg::distributed;
  dist::Session session(argc, argv);
  int fail_rank = -1;
  std::string mode;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--fail-rank") == 0) fail_rank = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--mode") == 0) mode = argv[i + 1];
  }
  try {
    const int r = dist::rank(), p = dist::world_size();
    tg::testing_ddp::Branchy model(1);
    dist::DistributedDataParallel ddp(model, {.bucket_cap_bytes = 256});
    tg::nn::SGD opt(model.parameters(), {.lr = 0.1});
    for (int step = 0; step < 5; ++step) {
      if (r == fail_rank && step == 2) {
        if (mode == "hang") std::this_thread::sleep_for(std::chrono::minutes(10));
        TG_CHECK(false, ValueError, "ddp_failure: rank {} fails at step {} on purpose", r, step);
      }
      const auto d = tg::testing_ddp::shard(tg::testing_ddp::make_data(4 * p, step), r, p);
      opt.zero_grad();
      cross_entropy(model(d.x), d.y).backward();
      opt.step();
    }
    return 0;
  } catch (const tg::Error& e) {
    dist::abort(1, fmt::format("[rank {} of {}] {}", dist::rank(), dist::world_size(), e.what()));
  }
}
