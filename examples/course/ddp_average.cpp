// file: examples/course/ddp_average.cpp
// Chapter 25: why the average of the ranks' gradients is the gradient of the whole batch. One
// process plays P = 4 ranks: the gradient of the mean loss over a global batch of 8 samples,
// against the average of the gradients of the 4 shards that an nn::DataLoader with
// num_replicas = 4 hands the ranks. Then 7 samples on 4 ranks, where the shards cannot all be
// the same size: padded as PyTorch's DistributedSampler pads, cut by drop_last, and uneven,
// averaged plainly and weighted by their sizes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

namespace nn = tg::nn;
using Shards = std::vector<std::vector<int64_t>>;

/// The gradient of the mean cross-entropy of `model` on the samples `rows` of (x, y): every
/// parameter's gradient, flattened one after the other, as float64.
std::vector<double> gradient(nn::MLP& model, const tg::Tensor& x, const tg::Tensor& y,
                             const std::vector<int64_t>& rows) {
  const tg::Tensor index = tg::tensor(rows);
  const tg::Tensor loss =
      tg::cross_entropy(model(tg::index_select(x, 0, index)), tg::index_select(y, 0, index));
  std::vector<double> flat;
  for (const tg::Tensor& g : tg::grad({loss}, model.parameters())) {
    const std::vector<double> v = g.to(tg::kFloat64).to_vector<double>();
    flat.insert(flat.end(), v.begin(), v.end());
  }
  return flat;
}

/// What the all-reduce leaves on every rank: sum over r of weight[r] x (rank r's gradient).
std::vector<double> reduce(nn::MLP& model, const tg::Tensor& x, const tg::Tensor& y,
                           const Shards& shards, const std::vector<double>& weight) {
  std::vector<double> out;
  for (size_t r = 0; r < shards.size(); ++r) {
    const std::vector<double> g = gradient(model, x, y, shards[r]);
    out.resize(g.size(), 0.0);
    for (size_t k = 0; k < g.size(); ++k) out[k] += weight[r] * g[k];
  }
  return out;
}

/// max_k |a_k - b_k|, printed as a number, or as "< bound" when it is rounding error only.
std::string gap(const std::vector<double>& a, const std::vector<double>& b, double bound) {
  double m = 0;
  for (size_t k = 0; k < a.size(); ++k) m = std::max(m, std::abs(a[k] - b[k]));
  return m < bound ? fmt::format("< {:.0e} (rounding)", bound) : fmt::format("{:.4f}", m);
}

/// The samples of each of p ranks, as a DataLoader with num_replicas = p walks one epoch of
/// n samples in order (shuffle off).
Shards shards_of(int64_t n, int64_t p, bool drop_last) {
  const tg::Tensor ids = tg::arange(0.0, static_cast<double>(n), 1.0, tg::kInt64);
  Shards out;
  for (int64_t r = 0; r < p; ++r) {
    nn::DataLoader loader(
        {ids},
        {.batch_size = 1, .shuffle = false, .drop_last = drop_last, .num_replicas = p, .rank = r});
    out.emplace_back();
    for (const std::vector<tg::Tensor>& batch : loader) {
      out.back().push_back(batch[0].item<int64_t>());
    }
  }
  return out;
}

std::vector<double> last(const std::vector<double>& v, size_t n) {
  return {v.end() - static_cast<std::ptrdiff_t>(n), v.end()};
}

}  // namespace

int main() {
  const int64_t P = 4;
  tg::Generator gen(25);
  const tg::Tensor x = tg::randn({8, 4}, tg::kFloat64, gen);
  const tg::Tensor y = tg::randint(0, 3, {8}, tg::kInt64, gen);
  nn::MLP model({4, 8, 3}, {.dtype = tg::kFloat64}, gen);
  const std::vector<double> mean(P, 1.0 / P);  // the all-reduce's average: 1/P for each rank
  fmt::print("MLP 4-8-3, float64, {} parameters; 8 samples on P = {} ranks\n",
             model.num_parameters(), P);

  // 1. One process on all 8 samples: the gradient of (1/8) sum_i loss_i. Four ranks on their
  //    shards of 2: each the gradient of its own mean loss, then summed and divided by P.
  const Shards equal = shards_of(8, P, false);
  for (int64_t r = 0; r < P; ++r) fmt::print("  rank {}: samples {}\n", r, equal[r]);
  const std::vector<double> whole = gradient(model, x, y, {0, 1, 2, 3, 4, 5, 6, 7});
  const std::vector<double> average = reduce(model, x, y, equal, mean);
  const std::vector<double> sum = reduce(model, x, y, equal, std::vector<double>(P, 1.0));
  fmt::print("gradient of the output bias, one process:  {:+.6f}\n",
             fmt::join(last(whole, 3), " "));
  fmt::print("the average of the 4 ranks' gradients:     {:+.6f}\n",
             fmt::join(last(average, 3), " "));
  fmt::print("their sum, not divided by P:               {:+.6f}\n", fmt::join(last(sum, 3), " "));
  fmt::print("largest difference, one process vs average, over all {} entries: {}\n", whole.size(),
             gap(whole, average, 1e-15));
  // The same in float32: the same sums in another order round differently, at float32's scale.
  tg::Generator gen32(25);
  nn::MLP model32({4, 8, 3}, {.dtype = tg::kFloat32}, gen32);
  const tg::Tensor x32 = x.to(tg::kFloat32);
  fmt::print("the same in float32: {}\n", gap(gradient(model32, x32, y, {0, 1, 2, 3, 4, 5, 6, 7}),
                                              reduce(model32, x32, y, equal, mean), 1e-6));

  // 2. Seven samples on four ranks: the gradient to match is that of (1/7) sum over 0..6.
  const std::vector<double> seven = gradient(model, x, y, {0, 1, 2, 3, 4, 5, 6});
  const Shards padded = shards_of(7, P, false), cut = shards_of(7, P, true);
  const Shards uneven = {{0, 1}, {2, 3}, {4, 5}, {6}};
  fmt::print("7 samples on 4 ranks, largest difference from the gradient of the 7:\n");
  fmt::print("  padded      {} averaged: {}\n", padded,
             gap(seven, reduce(model, x, y, padded, mean), 1e-15));
  fmt::print("  drop_last   {} averaged: {}\n", cut,
             gap(seven, reduce(model, x, y, cut, mean), 1e-15));
  fmt::print("  uneven      {} averaged: {}\n", uneven,
             gap(seven, reduce(model, x, y, uneven, mean), 1e-15));
  fmt::print("  uneven      {} weighted 2/7 2/7 2/7 1/7: {}\n", uneven,
             gap(seven, reduce(model, x, y, uneven, {2.0 / 7, 2.0 / 7, 2.0 / 7, 1.0 / 7}), 1e-15));
}
