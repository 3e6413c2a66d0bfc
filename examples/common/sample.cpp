// examples/common/sample.cpp — temperature, top-k and top-p sampling
// (examples/common/sample.h).
#include "examples/common/sample.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace tg::examples {

size_t sample_next(const std::vector<double>& logits, double temperature, int64_t top_k,
                   Generator& gen) {
  // exercise tiny_lm.sample: begin
  std::vector<size_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return logits[i] > logits[j]; });
  if (temperature == 0) return order[0];
  const size_t keep =
      top_k > 0 ? std::min<size_t>(static_cast<size_t>(top_k), logits.size()) : logits.size();
  std::vector<double> p(keep);
  double z = 0;
  for (size_t r = 0; r < keep; ++r) {  // softmax of the kept logits, max subtracted
    p[r] = std::exp((logits[order[r]] - logits[order[0]]) / temperature);
    z += p[r];
  }
  double u = gen.uniform_double() * z;
  for (size_t r = 0; r < keep; ++r) {
    if ((u -= p[r]) < 0) return order[r];
  }
  return order[keep - 1];  // u rounded up to z: the last kept one
  // exercise tiny_lm.sample: end
}

int64_t nucleus_size(const std::vector<double>& logits, double temperature, int64_t top_k,
                     double top_p) {
  // exercise tiny_lm.sample: begin
  const auto n = static_cast<int64_t>(logits.size());
  const int64_t kept = top_k > 0 ? std::min(top_k, n) : n;
  if (temperature == 0 || kept <= 1) return std::min<int64_t>(kept, 1);
  if (top_p >= 1) return kept;
  std::vector<double> by_size(logits);
  std::sort(by_size.begin(), by_size.end(), std::greater<>());
  // The kept weights, most likely first, relative to the largest (as sample_next's); the
  // nucleus ends at the first running sum that reaches top_p of their total.
  std::vector<double> w(static_cast<size_t>(kept));
  double total = 0;
  for (int64_t r = 0; r < kept; ++r) {
    w[r] = std::exp((by_size[r] - by_size[0]) / temperature);
    total += w[r];
  }
  double running = 0;
  for (int64_t r = 0; r < kept; ++r) {
    running += w[r];
    if (running >= top_p * total) return r + 1;
  }
  return kept;  // rounding left the sum just below top_p * total: all of them
  // exercise tiny_lm.sample: end
}

std::vector<int64_t> context_window(const std::vector<int64_t>& ids, int64_t context_length) {
  // exercise tiny_lm.sample: begin
  const int64_t t = std::min<int64_t>(static_cast<int64_t>(ids.size()), context_length);
  return std::vector<int64_t>(ids.end() - t, ids.end());  // the last t ids
  // exercise tiny_lm.sample: end
}

}  // namespace tg::examples
