// examples/common/sample.h — drawing the next character from a language model's logits:
// temperature, top-k and top-p, one uniform number per draw. Used by tiny_lm sample.
// Course: docs/course/17-tiny-lm.md (whose exercise is its body).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/generator.h"

namespace tg::examples {

/// The index of the next character, drawn from softmax(logits / temperature) over the
/// top_k most likely characters (top_k = 0, or more than there are: all of them);
/// temperature 0 takes the most likely one and draws nothing. Otherwise one uniform draw
/// from gen: walk the kept probabilities, most likely first, until their running sum passes
/// it. temperature >= 0 (the caller checks it).
size_t sample_next(const std::vector<double>& logits, double temperature, int64_t top_k,
                   Generator& gen);

/// Top-p ("nucleus") sampling on top of top-k: the smallest number of most likely characters
/// whose probabilities, after temperature and top-k (renormalised over the top_k kept), add
/// up to at least top_p. Pass it to sample_next as its top_k. top_p = 1 keeps the top_k
/// (all of them for top_k = 0); temperature 0 gives 1. top_p in (0, 1] (the caller checks
/// it).
int64_t nucleus_size(const std::vector<double>& logits, double temperature, int64_t top_k,
                     double top_p);

/// What the model sees to predict the next character: the last context_length ids of
/// `ids` (all of them while there are fewer), oldest first. context_length >= 1.
std::vector<int64_t> context_window(const std::vector<int64_t>& ids, int64_t context_length);

}  // namespace tg::examples
