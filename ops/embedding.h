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

#include <optional>

#include "core/autograd.h"

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
