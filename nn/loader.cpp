// nn/loader.cpp — the epoch order and the gathering of one batch.
#include "nn/loader.h"

#include <algorithm>

namespace tg::nn {

DataLoader::DataLoader(std::vector<Tensor> tensors, const LoaderOptions& options, Generator& gen)
    : tensors_(std::move(tensors)), options_(options), gen_(&gen) {
  TG_CHECK(options_.batch_size > 0, ValueError, "DataLoader: batch_size must be positive, got {}",
           options_.batch_size);
  TG_CHECK(!tensors_.empty(), ValueError, "DataLoader: needs at least one tensor, got none");
  for (size_t i = 0; i < tensors_.size(); ++i) {
    TG_CHECK(tensors_[i].defined(), ValueError, "DataLoader: tensor {} is undefined", i);
    TG_CHECK(tensors_[i].dim() >= 1, ShapeError,
             "DataLoader: tensor {} is 0-d; every tensor needs a first dim indexing the samples",
             i);
    TG_CHECK(tensors_[i].size(0) == tensors_[0].size(0), ShapeError,
             "DataLoader: tensor {} has shape {} but tensor 0 has shape {}; every tensor needs "
             "the same first dim (the number of samples)",
             i, tensors_[i].shape(), tensors_[0].shape());
  }
  n_ = tensors_[0].size(0);
}

int64_t DataLoader::num_batches() const {
  const int64_t b = options_.batch_size;
  return options_.drop_last ? n_ / b : (n_ + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
  return Iterator(this, options_.shuffle ? randperm(n_, *gen_)
                                         : arange(0.0, static_cast<double>(n_), 1.0, kInt64));
}

std::vector<Tensor> DataLoader::Iterator::operator*() const {
  const int64_t b = loader_->options_.batch_size;
  const int64_t start = batch_ * b;
  const Tensor index = order_.narrow(0, start, std::min(b, loader_->n_ - start));
  std::vector<Tensor> out;
  out.reserve(loader_->tensors_.size());
  for (const Tensor& t : loader_->tensors_) out.push_back(index_select(t, 0, index));
  return out;
}

}  // namespace tg::nn
