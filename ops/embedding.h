// ops/embedding.h — the lookup table that turns token ids into vectors.
//
// Shape legend: B = batch, T = time, V = vocab (rows of the table), D = embedding width;
// `...` = any shape of ids (B, T), (T), a single 0-d id, ...
//
//   ids (...) int64, table (V, D)  ->  embedding(ids, table)   (..., D)
//   out[..., d] = table[ids[...], d]
//
// The same as one_hot(ids, V) @ table, without building the one-hot matrix. Only the table
// gets a gradient: ids are integers.
#pragma once

#include <cstddef>
#include <optional>

#include "core/autograd.h"
#include "ops/kernels.h"

namespace tg {

/// Row ids[...] of `table` for every position of `ids`, like torch.nn.functional.embedding.
/// ids: int64 of any shape, every id in [0, V); table: (V, D), floating point (float16 and
/// bfloat16 included: the forward is an exact copy). The gradient reaching a row is the sum
/// over every position holding its id (repeated ids accumulate). padding_idx (in [-V, V),
/// negative counts from the end) names a row that is looked up as usual but never receives
/// a gradient. An id outside [0, V) is an IndexError naming the id, its position and V.
Tensor embedding(const Tensor& ids, const Tensor& table,
                 std::optional<int64_t> padding_idx = std::nullopt, Here here = Here::current());

}  // namespace tg

// ---------------------------------------------------------------- the kernels
// Reference (ops/embedding.cpp) and fast (ops/fast/embedding.cpp), chosen by ops/kernels.h.
// N ids, each in [0, V) (checked before any kernel runs); the write rule of ops/kernels.h.
namespace tg::kernels {

/// Row n of out = row ids[n] of the table, copied as bytes (rows of row_bytes bytes): a
/// lookup is exact in every dtype.
using EmbeddingForward = void(const int64_t* ids, const std::byte* table, std::byte* out,
                              int64_t n_ids, int64_t row_bytes);
/// dtable (V, D) = the rows of dout added into the rows their ids name (skipping
/// padding_idx; -1 for none), in the compute type F. Row n of dout starts at
/// dout + n * dout_stride: D for a dense dout, 0 when every row is the same one.
template <class F>
using EmbeddingBackward = void(const int64_t* ids, const F* dout, int64_t dout_stride,
                               GradOut<F> dtable, int64_t n_ids, int64_t vocab, int64_t dim,
                               int64_t padding_idx);

extern Kernel<EmbeddingForward> embedding_forward;
extern KernelPair<EmbeddingBackward, float, double> embedding_backward;

}  // namespace tg::kernels
