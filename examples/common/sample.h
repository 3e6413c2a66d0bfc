// examples/common/sample.h — drawing the next character from a language model's logits:
// temperature and top-k, one uniform number per draw. Used by tiny_lm sample.
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

/// What the model sees to predict the next character: the last context_length ids of
/// `ids` (all of them while there are fewer), oldest first. context_length >= 1.
std::vector<int64_t> context_window(const std::vector<int64_t>& ids, int64_t context_length);

}  // namespace tg::examples
