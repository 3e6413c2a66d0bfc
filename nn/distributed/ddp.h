// nn/distributed/ddp.h — data-parallel training: every rank holds the whole model, computes
// forward and backward on its own share of the batch, and the ranks average their gradients
// before each optimizer step, so that they all take the same step and stay identical.
//
//   tg::distributed::Session session(argc, argv);         // mpirun -np P ./program
//   nn::MLP model(...);
//   tg::distributed::DistributedDataParallel ddp(model);  // rank 0's weights, everywhere
//   nn::AdamW opt(model.parameters(), ...);
//   for (...) {
//     Tensor loss = cross_entropy(model(x_shard), y_shard);  // this rank's B / P samples
//     opt.zero_grad();
//     loss.backward();   // returns with .grad = the average over the P ranks
//     opt.step();        // the same step on every rank
//   }
//
// Why the average is the right gradient: the loss of a batch of B samples is the mean of the
// per-sample losses, so its gradient is (1/B) sum_i g_i. Split the batch into P shards of
// B/P samples; rank r's loss is the mean over its shard, with gradient G_r = (P/B) sum_{i in
// shard r} g_i. Then (1/P) sum_r G_r = (1/B) sum_i g_i: the average of the ranks' gradients
// is the gradient of the whole batch, up to the order of the float additions.
//
// How backward and communication overlap: each parameter has a post-accumulate hook
// (Tensor::register_post_accumulate_grad_hook) that fires as soon as its .grad is complete,
// during backward. The hook copies the gradient into its bucket (nn/distributed/buckets.h);
// when a bucket is full it starts a non-blocking all-reduce of it (iall_reduce) and lets the
// earlier ones progress. The last bucket, the parameters backward never reached, and the
// wait for every bucket happen in a callback at the end of backward
// (tg::queue_backward_callback), which writes the averages back into .grad. Buckets are sent
// in their index order on every rank, whatever order their gradients arrived in, because MPI
// matches collectives by the order they are called.
//
// Parameters no gradient reached on this rank (a branch the forward skipped) count as zero in
// the average; one that no rank's backward reached keeps its .grad as it was (PyTorch's
// find_unused_parameters behaviour, always on: it costs one small all-reduce per step).
// Gradient accumulation: inside no_sync() a backward only adds into .grad, and the next
// backward outside it averages the accumulated sums.
//
// All parameters must be float32 or float64, all of one dtype. Every rank must run backward
// the same number of times; a rank whose loss reached no parameter sends nothing and the
// others stop after the timeout (process_group.h).
//
// Unlike PyTorch's wrapper, this one need not see the forward (keep calling model(x)): all it
// does happens in the parameters' hooks, which it registers once, here.
//
// PyTorch equivalent: torch.nn.parallel.DistributedDataParallel(module, bucket_cap_mb=25).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nn/distributed/process_group.h"
#include "nn/module.h"

namespace tg::distributed {

struct DdpOptions {
  /// Bytes of gradient per bucket (PyTorch's default: 25 MiB).
  int64_t bucket_cap_bytes = int64_t{25} << 20;
  /// false: every bucket is sent at the end of backward, none during it (to measure what
  /// overlapping saves; the result is the same).
  bool overlap = true;
};

/// What the last synchronised backward cost (seconds, this rank).
struct DdpStats {
  int64_t syncs = 0;              ///< backward passes that averaged gradients
  int64_t buckets = 0;            ///< buckets per pass
  int64_t bytes = 0;              ///< gradient bytes per pass
  double last_wait_seconds = 0;   ///< at the end of the last backward, waiting for buckets
  double total_wait_seconds = 0;  ///< over all passes
};

class DistributedDataParallel {
 public:
  /// Wraps `module` (which must outlive this) and copies rank 0's parameters to every rank.
  explicit DistributedDataParallel(nn::Module& module, DdpOptions options = {});
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  nn::Module& module() { return *module_; }

  /// While alive, backward only accumulates into .grad (no communication): the micro-steps of
  /// gradient accumulation. PyTorch: `with ddp.no_sync():`.
  class NoSync {
   public:
    ~NoSync();
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    friend class DistributedDataParallel;
    explicit NoSync(DistributedDataParallel& ddp);
    DistributedDataParallel& ddp_;
    bool was_enabled_;
  };
  NoSync no_sync() { return NoSync(*this); }

  /// The buckets, as parameter indices into module().parameters() (buckets.h).
  const std::vector<std::vector<size_t>>& buckets() const;
  DdpStats stats() const;

  struct Reducer;  // the per-pass state the hooks share (ddp.cpp)

 private:
  nn::Module* module_;
  std::shared_ptr<Reducer> reducer_;
};

}  // namespace tg::distributed
