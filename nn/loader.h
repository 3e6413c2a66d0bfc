// nn/loader.h — mini-batches of a data set, reshuffled per epoch.
//
//   nn::DataLoader loader({train.images, train.labels}, {.batch_size = 128}, gen);
//   for (int epoch = 0; epoch < 5; ++epoch) {
//     for (const std::vector<Tensor>& batch : loader) {   // batch[0] (B, 784), batch[1] (B)
//       ...
//     }
//   }
//
// Every `for` over the loader is one epoch: begin() draws a fresh permutation of the N
// sample indices with tg::randperm(N, gen) (or takes 0, 1, ..., N-1 without shuffle), and
// batch k holds samples perm[k*B .. k*B + B) of every tensor, gathered with index_select.
// The samples come from a Dataset: rows of tensors (TensorDataset, what the constructor from
// tensors builds), or anything that can gather a batch of samples by index, such as
// nn::FashionMnist (nn/idx.h), which keeps its images as bytes and widens only the batch
// it is asked for to float32.
// The number of batches is ceil(N / B), or floor(N / B) with drop_last (the last, smaller
// batch is dropped), as in PyTorch. The generator is the only source of randomness, so the
// same seed gives the same batches in the same order.
//
// Data parallelism (nn/distributed/ddp.h): with num_replicas = P and rank = r, the loader of
// rank r walks only its shard of each epoch's order: samples order[r], order[r + P],
// order[r + 2P], ... (every rank's generator has the same seed, so every rank draws the same
// order and the shards are disjoint). When P does not divide N, the order is first made a
// multiple of P as PyTorch's DistributedSampler does: padded by repeating its first samples
// (so that every rank has ceil(N / P) of them and runs the same number of steps), or, with
// drop_last, cut to floor(N / P) * P. Batch k of the P ranks together is then batch k of one
// loader with batch_size * P over the same order (the padding aside): each rank's batch_size
// is its share of the global batch.
//
// PyTorch equivalent: torch.utils.data.DataLoader(TensorDataset(*tensors), batch_size,
// shuffle, drop_last, generator=gen); sharded, with
// sampler=DistributedSampler(dataset, num_replicas, rank, shuffle, drop_last=drop_last), whose
// order comes from its seed and set_epoch(epoch) rather than from a generator.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace tg::nn {

/// Settings of DataLoader.
struct LoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = true;  ///< a new random order every epoch
  /// Skip the last batch when it has fewer than batch_size samples (sharded: also cut the
  /// order to a multiple of num_replicas).
  bool drop_last = false;
  int64_t num_replicas = 1;  ///< data-parallel ranks sharing each epoch (1: no sharding)
  int64_t rank = 0;          ///< which of them this loader serves, 0 .. num_replicas - 1
};

/// Where a DataLoader's samples come from: PyTorch's map-style Dataset, asked for a whole
/// batch at once (its __getitem__ and the loader's collate_fn in one call), so that a batch
/// is one gather rather than B small tensors stacked.
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// The number of samples N.
  virtual int64_t size() const = 0;
  /// The samples `indices` (int64, 1-D, each in [0, N)), one tensor per field, each with
  /// first dim indices.numel(). An index out of range is a tg::IndexError.
  virtual std::vector<Tensor> get_batch(const Tensor& indices) const = 0;
};

/// Rows of tensors that share their first dim (e.g. images (N, 784) and labels (N)).
/// PyTorch equivalent: torch.utils.data.TensorDataset.
class TensorDataset final : public Dataset {
 public:
  /// `tensors` must all be defined, at least 1-D, and share their first dim N.
  explicit TensorDataset(std::vector<Tensor> tensors);
  int64_t size() const override { return tensors_[0].size(0); }
  /// index_select(t, 0, indices) of every tensor t.
  std::vector<Tensor> get_batch(const Tensor& indices) const override;

 private:
  std::vector<Tensor> tensors_;
};

/// Batches of the samples of a Dataset.
class DataLoader {
 public:
  /// Batches of rows of `tensors` (a TensorDataset of them). The loader keeps a reference to
  /// `gen`, which must outlive it.
  DataLoader(std::vector<Tensor> tensors, const LoaderOptions& options,
             Generator& gen = default_generator());
  /// Batches of `dataset`'s samples, which the loader shares.
  DataLoader(std::shared_ptr<const Dataset> dataset, const LoaderOptions& options,
             Generator& gen = default_generator());

  /// Samples this loader walks per epoch: N, or its shard's size when sharded.
  int64_t num_samples() const { return n_; }
  /// Batches per epoch: ceil(num_samples / batch_size), or floor with drop_last.
  int64_t num_batches() const;
  const LoaderOptions& options() const { return options_; }

  /// Walks the batches of one epoch; each batch is one tensor per source tensor.
  class Iterator {
   public:
    using value_type = std::vector<Tensor>;
    using difference_type = std::ptrdiff_t;

    std::vector<Tensor> operator*() const;
    Iterator& operator++() {
      ++batch_;
      return *this;
    }
    void operator++(int) { ++batch_; }
    bool operator==(std::default_sentinel_t) const { return batch_ >= loader_->num_batches(); }

   private:
    friend class DataLoader;
    Iterator(const DataLoader* loader, Tensor order) : loader_(loader), order_(std::move(order)) {}
    const DataLoader* loader_;
    Tensor order_;  // the epoch's sample order, int64 (N)
    int64_t batch_ = 0;
  };

  /// Starts an epoch: draws its order from the generator when shuffling.
  Iterator begin();
  std::default_sentinel_t end() const { return {}; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  LoaderOptions options_;
  Generator* gen_;
  int64_t total_ = 0;  // N, the samples of all shards
  int64_t n_ = 0;      // num_samples()
};

}  // namespace tg::nn
