// nn/embedding.cpp — Embedding: N(0, 1) init with a zero padding row, forward.
#include "nn/embedding.h"

#include "nn/init.h"

namespace tg::nn {
namespace {

std::optional<int64_t> normalised_padding(std::optional<int64_t> idx, int64_t num) {
  if (!idx) return std::nullopt;
  TG_CHECK(*idx >= -num && *idx < num, IndexError,
           "Embedding: padding_idx {} is out of range for num_embeddings {} (need [{}, {}))", *idx,
           num, -num, num);
  return *idx < 0 ? *idx + num : *idx;
}

}  // namespace

Embedding::Embedding(int64_t num, int64_t dim, EmbeddingOptions options, Generator& gen)
    : UnaryModule("Embedding"),
      num_embeddings(num),
      embedding_dim(dim),
      padding_idx(normalised_padding(options.padding_idx, num)) {
  TG_CHECK(num > 0 && dim > 0, ValueError,
           "Embedding: num_embeddings ({}) and embedding_dim ({}) must be positive", num, dim);
  TG_CHECK(is_floating_point(options.dtype), DTypeError,
           "Embedding: dtype must be floating point, got {}", options.dtype);
  register_parameter("weight", weight, empty({num, dim}, options.dtype));
  init::normal_(weight, 0.0, 1.0, gen);
  if (padding_idx) init::zeros_(weight.detach().select(0, *padding_idx));  // a view: no tape
}

Tensor Embedding::forward(const Tensor& ids) { return embedding(ids, weight, padding_idx); }

std::string Embedding::extra_repr() const {
  std::string s = fmt::format("{}, {}", num_embeddings, embedding_dim);
  if (padding_idx) s += fmt::format(", padding_idx={}", *padding_idx);
  return s;
}

}  // namespace tg::nn
