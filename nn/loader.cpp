// nn/loader.cpp — the epoch order, and the batches a TensorDataset gathers.
#include "nn/loader.h"

#include <algorithm>
#include <string_view>

namespace tg::nn {

namespace {

/// What TensorDataset needs of its tensors; `who` names the caller in the errors.
void check_tensors(const std::vector<Tensor>& tensors, std::string_view who) {
  TG_CHECK(!tensors.empty(), ValueError, "{}: needs at least one tensor, got none", who);
  for (size_t i = 0; i < tensors.size(); ++i) {
    TG_CHECK(tensors[i].defined(), ValueError, "{}: tensor {} is undefined", who, i);
    TG_CHECK(tensors[i].dim() >= 1, ShapeError,
             "{}: tensor {} is 0-d; every tensor needs a first dim indexing the samples", who, i);
    TG_CHECK(tensors[i].size(0) == tensors[0].size(0), ShapeError,
             "{}: tensor {} has shape {} but tensor 0 has shape {}; every tensor needs the same "
             "first dim (the number of samples)",
             who, i, tensors[i].shape(), tensors[0].shape());
  }
}

/// A TensorDataset of `tensors`, whose errors name the DataLoader the user called.
std::shared_ptr<const Dataset> dataset_of(std::vector<Tensor> tensors) {
  check_tensors(tensors, "DataLoader");
  return std::make_shared<const TensorDataset>(std::move(tensors));
}

}  // namespace

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  check_tensors(tensors_, "TensorDataset");
}

std::vector<Tensor> TensorDataset::get_batch(const Tensor& indices) const {
  std::vector<Tensor> out;
  out.reserve(tensors_.size());
  for (const Tensor& t : tensors_) out.push_back(index_select(t, 0, indices));
  return out;
}

DataLoader::DataLoader(std::vector<Tensor> tensors, const LoaderOptions& options, Generator& gen)
    : DataLoader(dataset_of(std::move(tensors)), options, gen) {}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, const LoaderOptions& options,
                       Generator& gen)
    : dataset_(std::move(dataset)), options_(options), gen_(&gen) {
  TG_CHECK(dataset_ != nullptr, ValueError, "DataLoader: the dataset is null");
  TG_CHECK(options_.batch_size > 0, ValueError, "DataLoader: batch_size must be positive, got {}",
           options_.batch_size);
  TG_CHECK(
      options_.num_replicas >= 1 && options_.rank >= 0 && options_.rank < options_.num_replicas,
      ValueError, "DataLoader: rank must be in [0, num_replicas), got rank {} of num_replicas {}",
      options_.rank, options_.num_replicas);
  total_ = dataset_->size();
  const int64_t p = options_.num_replicas;
  n_ = p == 1 ? total_ : options_.drop_last ? total_ / p : (total_ + p - 1) / p;
}

int64_t DataLoader::num_batches() const {
  const int64_t b = options_.batch_size;
  return options_.drop_last ? n_ / b : (n_ + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
  Tensor order = options_.shuffle ? randperm(total_, *gen_)
                                  : arange(0.0, static_cast<double>(total_), 1.0, kInt64);
  const int64_t p = options_.num_replicas;
  if (p > 1 && n_ > 0) {
    // This rank's shard: every p-th sample of the order padded (or cut) to n_ * p samples,
    // where padding repeats the order from its start.
    const std::vector<int64_t> all = order.to_vector<int64_t>();
    std::vector<int64_t> shard(static_cast<size_t>(n_));
    for (int64_t k = 0; k < n_; ++k) {
      shard[static_cast<size_t>(k)] = all[static_cast<size_t>((options_.rank + k * p) % total_)];
    }
    order = tensor(shard);
  } else if (p > 1) {
    order = zeros({0}, kInt64);
  }
  return Iterator(this, std::move(order));
}

std::vector<Tensor> DataLoader::Iterator::operator*() const {
  const int64_t b = loader_->options_.batch_size;
  const int64_t start = batch_ * b;
  const Tensor index = order_.narrow(0, start, std::min(b, loader_->n_ - start));
  std::vector<Tensor> batch = loader_->dataset_->get_batch(index);
  // A Dataset written by the user is checked once per batch: a wrong batch here would
  // otherwise surface as a puzzling shape error deep inside the model.
  TG_CHECK(!batch.empty(), ValueError,
           "DataLoader: the dataset's get_batch returned no tensors for a batch of {} indices",
           index.numel());
  for (size_t f = 0; f < batch.size(); ++f) {
    TG_CHECK(batch[f].defined() && batch[f].dim() >= 1 && batch[f].size(0) == index.numel(),
             ShapeError,
             "DataLoader: the dataset's get_batch returned tensor {} of shape {} for a batch of {} "
             "indices; every tensor of a batch needs first dim {}",
             f, batch[f].defined() ? fmt::format("{}", batch[f].shape()) : "(undefined)",
             index.numel(), index.numel());
  }
  return batch;
}

}  // namespace tg::nn
