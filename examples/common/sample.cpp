// examples/common/sample.cpp — temperature and top-k sampling (examples/common/sample.h).
#include "examples/common/sample.h"

#include <algorithm>
#include <cmath>
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

std::vector<int64_t> context_window(const std::vector<int64_t>& ids, int64_t context_length) {
  // exercise tiny_lm.sample: begin
  const int64_t t = std::min<int64_t>(static_cast<int64_t>(ids.size()), context_length);
  return std::vector<int64_t>(ids.end() - t, ids.end());  // the last t ids
  // exercise tiny_lm.sample: end
}

}  // namespace tg::examples
