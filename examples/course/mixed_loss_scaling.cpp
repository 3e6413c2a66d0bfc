// file: examples/course/mixed_loss_scaling.cpp
// Chapter 20: why float16 needs loss scaling. One step of a small language model: how small
// its gradients are, how many of them float16 would flush to zero or keep with fewer bits,
// what a loss scale S changes, and a real float16 backward with and without S.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"

namespace {

constexpr int64_t kB = 8, kT = 64, kV = 80;

// Where float16 puts a value: 0 (flushed), a subnormal (fewer than 11 significant bits),
// a normal number, or inf. The counts come from the conversion itself.
struct Bands {
  int64_t zero = 0, subnormal = 0, normal = 0, inf = 0;
};

Bands bands(const std::vector<float>& values, float scale) {
  Bands b;
  for (const float v : values) {
    const float h = std::fabs(static_cast<float>(tg::Half(v * scale)));
    if (h == 0) ++b.zero;
    else if (std::isinf(h)) ++b.inf;
    else if (h < 0x1p-14f) ++b.subnormal;
    else ++b.normal;
  }
  return b;
}

// The gradient of every parameter of `lm`, and of the logits, after one backward of
// S * loss; with `dtype`, the forward runs under autocast in it. Divided by S again.
std::vector<float> gradients(tg::nn::TransformerLM& lm, const tg::Tensor& ids,
                             const tg::Tensor& targets, std::optional<tg::DType> dtype, float scale,
                             std::vector<float>* logit_grads = nullptr) {
  lm.zero_grad();
  tg::Tensor logits, loss;
  {
    std::optional<tg::AutocastGuard> autocast;
    if (dtype) autocast.emplace(*dtype);
    logits = lm(ids).reshape({kB * kT, kV});
    loss = tg::cross_entropy(logits, targets);
  }
  logits.retain_grad();
  tg::mul(loss, static_cast<double>(scale)).backward();
  std::vector<float> out;
  for (const tg::Tensor& p : lm.parameters()) {
    for (const float g : p.grad().to_vector<float>()) out.push_back(g / scale);
  }
  if (logit_grads) *logit_grads = logits.grad().to(tg::kFloat32).to_vector<float>();
  return out;
}

}  // namespace

int main() {
  // The reference kernels (ops/kernels.h), which every tree has: the fast ones add up the
  // products of a float16 matrix product in another order, and a gradient near a rounding
  // boundary would then land on the other side, changing a count below by one.
  const tg::KernelPathGuard reference(tg::KernelPath::kReference);
  const tg::nn::TransformerConfig config{.vocab_size = kV,
                                         .context_length = kT,
                                         .d_model = 64,
                                         .n_layers = 2,
                                         .n_heads = 4,
                                         .d_ff = 192,
                                         .rope = true};
  tg::Generator gen(20);
  tg::nn::TransformerLM lm(config, gen);
  const tg::Tensor ids = tg::randint(0, kV, {kB, kT}, tg::kInt64, gen);
  const tg::Tensor targets = tg::randint(0, kV, {kB * kT}, tg::kInt64, gen);

  // One step in float32: the true gradients.
  std::vector<float> dlogits;
  const std::vector<float> g32 = gradients(lm, ids, targets, std::nullopt, 1.0f, &dlogits);
  std::vector<float> all = g32;
  all.insert(all.end(), dlogits.begin(), dlogits.end());
  float lo = std::numeric_limits<float>::infinity(), hi = 0;
  for (const float g : all) {
    if (g == 0) continue;
    lo = std::min(lo, std::fabs(g));
    hi = std::max(hi, std::fabs(g));
  }
  fmt::print("{} weight gradients and {} logit gradients; nonzero |g| from 2^{} to 2^{}\n",
             g32.size(), dlogits.size(), std::ilogb(lo), std::ilogb(hi));

  fmt::print("\nS * g rounded to float16:\n");
  fmt::print("{:>8} {:>10} {:>10} {:>10} {:>10}\n", "S", "zero", "subnormal", "normal", "inf");
  for (const int e : {0, 8, 16, 24}) {
    const Bands b = bands(all, std::ldexp(1.0f, e));
    fmt::print("{:>8} {:>10} {:>10} {:>10} {:>10}\n", fmt::format("2^{}", e), b.zero, b.subnormal,
               b.normal, b.inf);
  }

  // The same step with its forward under float16 autocast, so the backward runs in float16
  // too; S * loss, divided by S again in float32 (what GradScaler::unscale_ does).
  fmt::print("\nfloat16 backward, unscaled in float32, against the float32 weight gradients:\n");
  fmt::print("{:>8} {:>8} {:>26} {:>18}\n", "S", "lost", "rel. error, |g| < 2^-14",
             "rel. error, all");
  for (const int e : {0, 8, 16}) {
    const float scale = std::ldexp(1.0f, e);
    const std::vector<float> g16 = gradients(lm, ids, targets, tg::kFloat16, scale);
    // Lost: nonzero in float32, 0 here. The relative error (in the 2-norm) over the
    // gradients float16 can hold only as subnormals (|g| < 2^-14), and over all of them.
    int64_t lost = 0;
    double small_diff = 0, small_norm = 0, diff = 0, norm = 0;
    for (size_t i = 0; i < g16.size(); ++i) {
      lost += g16[i] == 0 && g32[i] != 0;
      const double d = std::pow(static_cast<double>(g16[i]) - g32[i], 2);
      const double n = std::pow(static_cast<double>(g32[i]), 2);
      diff += d;
      norm += n;
      if (std::fabs(g32[i]) < 0x1p-14f) {
        small_diff += d;
        small_norm += n;
      }
    }
    fmt::print("{:>8} {:>8} {:>26.2e} {:>18.2e}\n", fmt::format("2^{}", e), lost,
               std::sqrt(small_diff / small_norm), std::sqrt(diff / norm));
  }
}
