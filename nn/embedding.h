// nn/embedding.h — Embedding: a learned table of vectors looked up by id (torch.nn.Embedding).
//
// Shapes: ids (...) int64 -> (..., embedding_dim); weight (num_embeddings, embedding_dim).
#pragma once

#include <optional>

#include "nn/module.h"

namespace tg::nn {

/// Constructor settings of Embedding: `Embedding(vocab, 64, {.padding_idx = 0})`.
struct EmbeddingOptions {
  /// A row that starts at zero and never gets a gradient (e.g. a padding token). May be
  /// negative (counts from the end, like PyTorch, which stores it as num_embeddings + idx).
  std::optional<int64_t> padding_idx = std::nullopt;
  DType dtype = kFloat32;  ///< dtype of the table
};

/// A lookup table, like torch.nn.Embedding. Init as PyTorch: weight ~ N(0, 1) drawn from
/// `gen`, then the padding row (if any) set to zero.
class Embedding : public UnaryModule {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, EmbeddingOptions options = {},
            Generator& gen = default_generator());

  /// embedding(ids, weight, padding_idx): row ids[...] of the table for each position.
  Tensor forward(const Tensor& ids) override;
  /// "10, 3" or "10, 3, padding_idx=0"
  std::string extra_repr() const override;

  const int64_t num_embeddings;
  const int64_t embedding_dim;
  /// In [0, num_embeddings) once constructed (a negative option is normalised).
  const std::optional<int64_t> padding_idx;
  Tensor weight;  ///< (num_embeddings, embedding_dim)
};

}  // namespace tg::nn
