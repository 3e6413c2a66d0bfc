// nn/distributed/ddp.cpp — DistributedDataParallel (ddp.h): buckets filled by gradient hooks,
// all-reduced while backward goes on, and written back when it ends.
#include "nn/distributed/ddp.h"

#include <chrono>

#include "nn/distributed/buckets.h"

namespace tg::distributed {

// Everything the hooks share. The hooks hold it weakly: once the wrapper is gone they do
// nothing, and the parameters train on alone.
struct DistributedDataParallel::Reducer {
  std::vector<Tensor> params;
  DdpOptions options;
  std::vector<std::vector<size_t>> buckets;
  std::vector<Tensor> buffers;     // per bucket: its gradients, one after the other
  std::vector<size_t> bucket_of;   // per parameter
  std::vector<int64_t> offset_of;  // per parameter: where its gradient starts in the buffer
  bool sync = true;                // false inside no_sync()
  DdpStats stats;

  // This pass.
  bool in_pass = false;
  std::vector<char> ready;       // per parameter: its gradient is in the bucket
  std::vector<int64_t> missing;  // per bucket: gradients still to come
  std::vector<Work> works;       // per bucket, once sent
  size_t sent = 0;               // buckets 0 .. sent-1 are on their way

  Tensor slot(size_t i) {
    return buffers[bucket_of[i]].narrow(0, offset_of[i], params[i].numel()).view(params[i].shape());
  }

  // Parameter i's gradient is complete (its post-accumulate hook).
  void on_grad_ready(size_t i, const std::shared_ptr<Reducer>& self) {
    if (!sync) return;
    if (!in_pass) start_pass(self);
    if (ready[i]) return;
    slot(i).copy_(params[i].grad());
    ready[i] = 1;
    --missing[bucket_of[i]];
    if (options.overlap) send_full_buckets();
    for (size_t b = 0; b < sent; ++b) works[b].test();  // lets MPI move the earlier ones on
  }

  void start_pass(const std::shared_ptr<Reducer>& self) {
    in_pass = true;
    ready.assign(params.size(), 0);
    missing.clear();
    for (const auto& bucket : buckets) missing.push_back(static_cast<int64_t>(bucket.size()));
    works.assign(buckets.size(), Work());
    sent = 0;
    std::weak_ptr<Reducer> weak = self;
    queue_backward_callback([weak] {
      if (auto r = weak.lock()) r->finish_pass();
    });
  }

  // Sends every bucket that is full, in bucket order: bucket b never leaves before b - 1, so
  // every rank calls the all-reduces in the same order, whatever order its hooks fired in.
  void send_full_buckets() {
    while (sent < buckets.size() && missing[sent] == 0) {
      works[sent] = iall_reduce(buffers[sent], ReduceOp::Average,
                                fmt::format("DistributedDataParallel: all-reduce of gradient "
                                            "bucket {} of {}",
                                            sent, buckets.size()));
      ++sent;
    }
  }

  // The end of backward: the gradients that never came, the last buckets, the wait, and the
  // averages back into .grad.
  void finish_pass() {
    in_pass = false;
    const auto start = std::chrono::steady_clock::now();
    // used[i]: parameter i has a gradient on this rank; after the all-reduce (max), on any.
    Tensor used = zeros({static_cast<int64_t>(params.size())}, kInt64);
    int64_t* u = used.data<int64_t>();
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor g = params[i].grad();
      u[i] = g.defined() ? 1 : 0;
      if (ready[i]) continue;
      // Not reached by this backward: what .grad holds from no_sync micro-steps, or zero.
      if (g.defined()) slot(i).copy_(g);
      else slot(i).fill_(0.0);
      ready[i] = 1;
      --missing[bucket_of[i]];
    }
    send_full_buckets();
    Work used_anywhere = iall_reduce(used, ReduceOp::Max,
                                     "DistributedDataParallel: all-reduce of the used parameters");
    for (Work& w : works) w.wait();
    used_anywhere.wait();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (size_t i = 0; i < params.size(); ++i) {
      if (u[i] == 0) continue;  // no rank has a gradient: leave .grad undefined
      if (!params[i].grad().defined()) params[i].set_grad(zeros_like(params[i]));
      Tensor g = params[i].grad();
      g.copy_(slot(i));
    }
    ++stats.syncs;
    stats.last_wait_seconds = waited;
    stats.total_wait_seconds += waited;
  }
};

DistributedDataParallel::DistributedDataParallel(nn::Module& module, DdpOptions options)
    : module_(&module), reducer_(std::make_shared<Reducer>()) {
  Reducer& r = *reducer_;
  r.options = options;
  r.params = module.parameters();
  TG_CHECK(!r.params.empty(), ValueError,
           "DistributedDataParallel: the module has no parameters, so there is nothing to "
           "average");
  const DType dtype = r.params[0].dtype();
  std::vector<int64_t> bytes;
  for (size_t i = 0; i < r.params.size(); ++i) {
    const Tensor& p = r.params[i];
    TG_CHECK(p.dtype() == dtype && (dtype == kFloat32 || dtype == kFloat64), DTypeError,
             "DistributedDataParallel: the parameters must be all float32 or all float64; "
             "parameter {} is {} and parameter 0 is {}",
             i, p.dtype(), dtype);
    TG_CHECK(p.is_contiguous(), ValueError,
             "DistributedDataParallel: parameter {} (shape {}) is not contiguous", i, p.shape());
    bytes.push_back(p.numel() * static_cast<int64_t>(element_size(dtype)));
  }
  r.buckets = assign_buckets(bytes, options.bucket_cap_bytes);
  r.bucket_of.resize(r.params.size());
  r.offset_of.resize(r.params.size());
  for (size_t b = 0; b < r.buckets.size(); ++b) {
    int64_t n = 0;
    for (size_t i : r.buckets[b]) {
      r.bucket_of[i] = b;
      r.offset_of[i] = n;
      n += r.params[i].numel();
    }
    r.buffers.push_back(zeros({n}, dtype));
    r.stats.bytes += n * static_cast<int64_t>(element_size(dtype));
  }
  r.stats.buckets = static_cast<int64_t>(r.buckets.size());

  // Every rank starts from rank 0's weights (the same seed would give them too; this makes
  // sure of it).
  for (Tensor& p : r.params) {
    Tensor data = p.detach();
    broadcast(data, 0);
  }
  std::weak_ptr<Reducer> weak = reducer_;
  for (size_t i = 0; i < r.params.size(); ++i) {
    r.params[i].register_post_accumulate_grad_hook([weak, i](const Tensor&) {
      if (auto self = weak.lock()) self->on_grad_ready(i, self);
    });
  }
}

DistributedDataParallel::~DistributedDataParallel() = default;

DistributedDataParallel::NoSync::NoSync(DistributedDataParallel& ddp)
    : ddp_(ddp), was_enabled_(ddp.reducer_->sync) {
  ddp.reducer_->sync = false;
}
DistributedDataParallel::NoSync::~NoSync() { ddp_.reducer_->sync = was_enabled_; }

const std::vector<std::vector<size_t>>& DistributedDataParallel::buckets() const {
  return reducer_->buckets;
}
DdpStats DistributedDataParallel::stats() const { return reducer_->stats; }

}  // namespace tg::distributed
