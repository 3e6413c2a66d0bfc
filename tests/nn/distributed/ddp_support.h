// tests/nn/distributed/ddp_support.h — what the data-parallel tests share: a small float64
// model whose branches a test can switch off (unused parameters), seeded batches, and
// parameter comparisons.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace tg::testing_ddp {

/// logits = head(relu(body(x))) + (use_side ? side(x) : 0); `never` is registered but no
/// forward uses it. float64 throughout, so that sums in another order differ by ~1e-16.
class Branchy : public nn::Module {
 public:
  explicit Branchy(uint64_t seed)
      : nn::Module("Branchy"),
        gen_(seed),
        body_(5, 8, {.dtype = kFloat64}, gen_),
        head_(8, 3, {.dtype = kFloat64}, gen_),
        side_(5, 3, {.dtype = kFloat64}, gen_),
        never_(5, 3, {.dtype = kFloat64}, gen_) {
    register_module("body", body_);
    register_module("head", head_);
    register_module("side", side_);
    register_module("never", never_);
  }
  Tensor operator()(const Tensor& x, bool use_side = true) {
    Tensor out = head_(relu(body_(x)));
    return use_side ? out + side_(x) : out;
  }

 private:
  Generator gen_;
  nn::Linear body_, head_, side_, never_;
};

/// A batch of n inputs (n, 5) and class labels (n), the same for every caller of a seed.
struct Data {
  Tensor x, y;
};
inline Data make_data(int64_t n, uint64_t seed) {
  Generator gen(seed);
  return {randn({n, 5}, kFloat64, gen), randint(0, 3, {n}, kInt64, gen)};
}

/// Rows [r n / p, (r + 1) n / p) of d: rank r's share of a global batch.
inline Data shard(const Data& d, int r, int p) {
  const int64_t share = d.x.size(0) / p;
  return {d.x.narrow(0, r * share, share), d.y.narrow(0, r * share, share)};
}

/// Every parameter's values, one after the other.
inline std::vector<double> flat_values(const nn::Module& m) {
  std::vector<double> out;
  for (const Tensor& p : m.parameters()) {
    const std::vector<double> v = p.to_vector<double>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

/// Every parameter's gradient, one after the other (zeros for an undefined one).
inline std::vector<double> flat_grads(const nn::Module& m) {
  std::vector<double> out;
  for (const Tensor& p : m.parameters()) {
    const std::vector<double> v =
        p.grad().defined() ? p.grad().to_vector<double>() : std::vector<double>(p.numel(), 0.0);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

/// The largest |a_i - b_i| (infinity if the sizes differ).
inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace tg::testing_ddp
