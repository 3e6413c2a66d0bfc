// tests/ops/fast/attention_test.cpp — attention's fast kernels (ops/fast/attention.cpp and
// ops/fast/attention_tiled.cpp): blocked GEMM per (batch, head) slice, a polynomial exp for
// float32, against the reference loops on awkward sizes, and across thread counts.
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "test_util.h"

namespace tg {
namespace {

using testing::as_doubles;

/// A random-looking bool mask in which every query keeps at least key (i mod tk).
Tensor ragged_mask(int64_t tq, int64_t tk) {
  Tensor m = empty({tq, tk}, kBool);
  bool* p = m.data<bool>();
  for (int64_t i = 0; i < tq; ++i) {
    for (int64_t j = 0; j < tk; ++j) p[i * tk + j] = j == i % tk || (i * 7 + j * 3) % 5 < 2;
  }
  return m;
}

Tensor sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(),
            bool causal = false, std::optional<double> scale = std::nullopt) {
  return scaled_dot_product_attention(q, k, v, mask, causal, scale);
}

// ---------------------------------------------------------------- fast path vs reference
// The fast kernels (blocked GEMM per (batch, head) slice, query blocks of 64 rows, a
// polynomial exp for float32) against the plain loops, on awkward sizes.
struct FastCase {
  int64_t B, H, Tq, Tk, D, Dv;
  int mask;          // 0 none, 1 causal, 2 bool, 3 float with a gradient
  int layout;        // 0 contiguous, 1 heads split by a transpose, 2 last dim strided
  double scale = 0;  // 0: the default 1 / sqrt(D)
};

/// A (B, H, T, X) leaf of standard normals in dtype dt, laid out as `layout` says.
Tensor layout_leaf(int64_t b, int64_t h, int64_t t, int64_t x, int layout, DType dt,
                   Generator& gen) {
  Tensor r;
  if (layout == 1) r = randn({b, t, h, x}, dt, gen).transpose(1, 2);
  else if (layout == 2) r = randn({b, h, x, t}, dt, gen).transpose(2, 3);
  else r = randn({b, h, t, x}, dt, gen);
  return r.requires_grad_();
}

/// The inputs of one case in dtype dt: q, k, v and, for mask kind 3, the float mask (all
/// leaves whose gradients are compared); a bool mask (kind 2) goes to `bool_mask`.
std::vector<Tensor> case_inputs(const FastCase& c, DType dt, Generator& gen, Tensor* bool_mask) {
  std::vector<Tensor> in = {layout_leaf(c.B, c.H, c.Tq, c.D, c.layout, dt, gen),
                            layout_leaf(c.B, c.H, c.Tk, c.D, c.layout, dt, gen),
                            layout_leaf(c.B, c.H, c.Tk, c.Dv, c.layout, dt, gen)};
  if (c.mask == 2) *bool_mask = ragged_mask(c.Tq, c.Tk);
  if (c.mask == 3) in.push_back(randn({c.B, 1, c.Tq, c.Tk}, dt, gen).requires_grad_());
  return in;
}

/// out, then the gradients of every input in `in`, on the path `reference` picks, with the
/// attention kernel `algorithm` (the row kernel unless told).
std::vector<Tensor> attention_results(const std::vector<Tensor>& in, const Tensor& bool_mask,
                                      const Tensor& gout, const FastCase& c, bool reference,
                                      const AttentionAlgorithm& algorithm = {}) {
  KernelPathGuard path(testing::kernels_for(reference));
  AttentionAlgorithmGuard kernel(algorithm);
  const Tensor mask = in.size() > 3 ? in[3] : bool_mask;
  const std::optional<double> scale = c.scale > 0 ? std::optional<double>(c.scale) : std::nullopt;
  const Tensor out = sdpa(in[0], in[1], in[2], mask, c.mask == 1, scale);
  std::vector<Tensor> r = grad({out}, in, {gout});
  r.insert(r.begin(), out.detach());
  return r;
}

std::vector<FastCase> fast_cases() {
  return {
      {1, 1, 1, 1, 1, 1, 0, 0},         {2, 3, 7, 9, 5, 3, 0, 1},
      {1, 2, 129, 129, 8, 8, 1, 1},     {2, 1, 70, 130, 16, 17, 0, 0},
      {1, 2, 65, 40, 7, 4, 1, 2},       {2, 2, 33, 66, 4, 6, 2, 1},
      {1, 3, 67, 19, 3, 5, 3, 0},       {1, 1, 1, 129, 32, 32, 0, 2},
      {2, 2, 70, 70, 4, 4, 1, 0, 30.0},  // scores far apart: exps underflow to 0
  };
}

/// Fast against reference for every case, both with `algorithm`. The paths differ in
/// rounding only: each value is a sum of at most 130 products, added in another order
/// (blocked GEMM with fused multiply-adds, 16 partial sums in the softmax; the tiled kernels
/// also rescale the running output once per key tile, a factor <= 1 off by half an ulp) and
/// with another exp (a polynomial within 1 ulp of libm's in float32). Such sums agree to a few
/// ulp of the sum of |terms|, which grows with the sizes and with cancellation in the
/// gradients; for standard normal inputs at these sizes the worst seen was 1.3e-5 (float32,
/// ulp 1.2e-7) and 1.1e-13 (float64) times (1 + |value|): the bounds leave a factor of about 8.
void expect_fast_agrees_with_reference(const AttentionAlgorithm& algorithm) {
  for (const DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-12;
    Generator gen(21);
    for (const FastCase& c : fast_cases()) {
      Tensor bool_mask;
      const std::vector<Tensor> in = case_inputs(c, dt, gen, &bool_mask);
      const Tensor gout = randn({c.B, c.H, c.Tq, c.Dv}, dt, gen);
      const auto fast = attention_results(in, bool_mask, gout, c, false, algorithm);
      const auto ref = attention_results(in, bool_mask, gout, c, true, algorithm);
      ASSERT_EQ(fast.size(), ref.size());
      for (size_t i = 0; i < fast.size(); ++i) {
        ASSERT_EQ(fast[i].shape(), ref[i].shape());
        const auto f = as_doubles(fast[i]), r = as_doubles(ref[i]);
        for (size_t e = 0; e < f.size(); ++e) {
          ASSERT_NEAR(f[e], r[e], tol * (1 + std::abs(r[e]))) << fmt::format(
              "{} q ({}, {}, {}, {}) Tk {} Dv {} mask {} layout {} tiles {}x{}: result {} "
              "element {}",
              dt, c.B, c.H, c.Tq, c.D, c.Tk, c.Dv, c.mask, c.layout, algorithm.tile_q,
              algorithm.tile_k, i, e);
        }
      }
    }
  }
}

TEST(FastAttentionTest, AgreesWithTheReference) { expect_fast_agrees_with_reference({}); }

TEST(FastAttentionTest, TiledAgreesWithTheTiledReference) {
  // ops/fast/attention_tiled.cpp against ops/attention_tiled.cpp, with tiles that divide the
  // cases' lengths and tiles that do not (the cases have T = 1 to 130).
  for (const auto& [tq, tk] : {std::pair{64, 64}, std::pair{16, 32}, std::pair{5, 7}}) {
    expect_fast_agrees_with_reference({AttentionKernel::kTiled, tq, tk});
  }
}

TEST(FastAttentionTest, GroupedQueryAgreesWithTheReferenceAndAcrossThreads) {
  // Under grouped-query attention the backward's threads take a kv head with all the query
  // heads that share it, so dk and dv are still summed on one thread in one order. Both
  // kernels, float32, with the tolerance of AgreesWithTheReference.
  Generator gen(24);
  const Tensor q = randn({2, 6, 70, 8}, kFloat32, gen).requires_grad_();
  const Tensor k = randn({2, 70, 2, 8}, kFloat32, gen).transpose(1, 2).requires_grad_();
  const Tensor v = randn({2, 70, 2, 5}, kFloat32, gen).transpose(1, 2).requires_grad_();
  const Tensor gout = randn({2, 6, 70, 5}, kFloat32, gen);
  auto results = [&](bool reference, int threads, const AttentionAlgorithm& algorithm) {
    KernelPathGuard path(testing::kernels_for(reference));
    NumThreadsGuard n(threads);
    AttentionAlgorithmGuard kernel(algorithm);
    const Tensor out = scaled_dot_product_attention(q, k, v, {}, true, {}, true);
    std::vector<Tensor> r = grad({out}, {q, k, v}, {gout});
    r.insert(r.begin(), out.detach());
    return r;
  };
  for (const AttentionAlgorithm& algorithm :
       {AttentionAlgorithm{}, AttentionAlgorithm{AttentionKernel::kTiled, 16, 32}}) {
    const auto ref = results(true, 1, algorithm), one = results(false, 1, algorithm),
               two = results(false, 2, algorithm);
    for (size_t i = 0; i < ref.size(); ++i) {
      const auto r = as_doubles(ref[i]), f = as_doubles(one[i]);
      for (size_t e = 0; e < r.size(); ++e) {
        ASSERT_NEAR(f[e], r[e], 1e-4 * (1 + std::abs(r[e]))) << "result " << i << " element " << e;
      }
      EXPECT_EQ(one[i].to_vector<float>(), two[i].to_vector<float>()) << "result " << i;
    }
  }
}

TEST(FastAttentionTest, BFloat16GroupedQueryForwardIsTheRepeatedOnes) {
  // The bfloat16 kernel reads a shared kv head for every query head of its group: the same
  // numbers, in the same order, as attention on k and v with their heads repeated.
  Generator gen(25);
  const Tensor q = randn({1, 4, 33, 8}, kFloat32, gen).to(kBFloat16);
  const Tensor k = randn({1, 1, 33, 8}, kFloat32, gen).to(kBFloat16);
  const Tensor v = randn({1, 1, 33, 8}, kFloat32, gen).to(kBFloat16);
  const Tensor grouped = scaled_dot_product_attention(q, k, v, {}, true, {}, true);
  const Tensor repeated = scaled_dot_product_attention(
      q, k.expand({1, 4, 33, 8}).contiguous(), v.expand({1, 4, 33, 8}).contiguous(), {}, true);
  EXPECT_EQ(as_doubles(grouped), as_doubles(repeated));
}

TEST(FastAttentionTest, TiledFastPathReallyRuns) {
  ASSERT_NE(kernels::attention_tiled_forward.of<float>().fast(), nullptr);
  ASSERT_NE(kernels::attention_tiled_backward.of<float>().fast(), nullptr);
  ASSERT_NE(kernels::attention_tiled_forward.of<double>().fast(), nullptr);
  ASSERT_NE(kernels::attention_tiled_backward.of<double>().fast(), nullptr);
}

TEST(FastAttentionTest, IsBitIdenticalForOneAndTwoThreads) {
  // Threads take whole (batch, head) slices, so every number is computed by the same code in
  // the same order whatever the thread count; both kernels.
  Generator gen(22);
  for (const auto& [c, algorithm] :
       {std::pair{FastCase{2, 2, 129, 129, 16, 16, 1, 1}, AttentionAlgorithm{}},
        std::pair{FastCase{3, 1, 100, 80, 24, 8, 3, 0}, AttentionAlgorithm{}},
        std::pair{FastCase{2, 2, 129, 129, 16, 16, 1, 1},
                  AttentionAlgorithm{AttentionKernel::kTiled, 32, 16}},
        std::pair{FastCase{3, 1, 100, 80, 24, 8, 3, 0},
                  AttentionAlgorithm{AttentionKernel::kTiled, 64, 64}}}) {
    Tensor bool_mask;
    const std::vector<Tensor> in = case_inputs(c, kFloat32, gen, &bool_mask);
    const Tensor gout = randn({c.B, c.H, c.Tq, c.Dv}, kFloat32, gen);
    std::vector<Tensor> one, two;
    {
      NumThreadsGuard threads(1);
      one = attention_results(in, bool_mask, gout, c, false, algorithm);
    }
    {
      NumThreadsGuard threads(2);
      two = attention_results(in, bool_mask, gout, c, false, algorithm);
    }
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(one[i].to_vector<float>(), two[i].to_vector<float>()) << "result " << i;
    }
  }
}

// ---------------------------------------------------------------- bfloat16
// The bfloat16 kernel (ops/fast/attention.cpp) against the widening reference (inputs widened
// to float32, the float32 reference loops, each result rounded once). The products are exact
// in both and summed in float32; what the bfloat16 kernel adds is the rounding of P (before
// O = P V and dV = P^T dO) and of dS (before dQ = scale dS K and dK = scale dS^T Q) to
// bfloat16, each element off by at most u = 2^-8 of itself. Elementwise, from the magnitudes
// in float64:
//   O:  u (P |V|), and the saved O (rounded to bfloat16 in each path) differs by
//       dO_err = u (P |V|) + 2^-7 |O|;
//   dS = P o (dP - delta) with delta_i = dO_i . O_i read from the saved O: its error is
//       dS_err = u |dS| + P o delta_err, delta_err_i = |dO_i| . dO_err_i;
//   dQ: scale (dS_err |K|);  dK: scale (dS_err^T |Q|);  dV: u (P^T |dO|);
//   the float mask's gradient, dS summed over heads: P o delta_err, plus float32 rounding
//       (2^-16 of its terms P (|dP| + |delta|)), both summed like it.
// The tolerance is twice that, plus one bfloat16 unit of the result (2^-7 |r|) because the
// two results are rounded to bfloat16 separately. Last, where the CPU has AVX512-BF16 the
// GEMM flushes denormals (ops/fast/gemm.h): each product may lose up to 2^-126, so every
// result also gets an absolute 2^-126 times its number of terms (at most Tq + Tk) times its
// largest other factor (at most 64 here: |scale| <= 30 times normals).

/// The magnitudes above, in float64, for one case: {out, dq, dk, dv[, dmask]}.
std::vector<Tensor> bf16_error_scales(const std::vector<Tensor>& in, const Tensor& bool_mask,
                                      const Tensor& gout, const FastCase& c) {
  const double u = std::ldexp(1.0, -8);
  const double scale = c.scale > 0 ? c.scale : 1 / std::sqrt(static_cast<double>(c.D));
  const Tensor q = in[0].detach().to(kFloat64), k = in[1].detach().to(kFloat64);
  const Tensor v = in[2].detach().to(kFloat64), g = gout.to(kFloat64);
  Tensor s = mul(matmul(q, k.transpose(2, 3)), scale);
  if (c.mask == 3) s = add(s, in[3].detach().to(kFloat64));
  if (c.mask == 1 || c.mask == 2) {  // masked keys: score -inf, so p = 0
    std::vector<bool> drop(static_cast<size_t>(c.Tq * c.Tk));
    const std::vector<bool> keep =
        c.mask == 2 ? bool_mask.to_vector<bool>() : std::vector<bool>(drop.size(), true);
    for (int64_t i = 0; i < c.Tq; ++i) {
      for (int64_t j = 0; j < c.Tk; ++j) {
        const auto e = static_cast<size_t>(i * c.Tk + j);
        drop[e] = c.mask == 1 ? j > i : !keep[e];
      }
    }
    s = masked_fill(s, tensor(drop, {c.Tq, c.Tk}), -std::numeric_limits<double>::infinity());
  }
  const Tensor p = softmax(s, -1), o = matmul(p, v);
  const Tensor pv = matmul(p, abs(v));
  const Tensor dp = matmul(g, v.transpose(2, 3));
  const Tensor delta = sum(mul(g, o), {-1}, true);
  const Tensor ds = abs(mul(p, sub(dp, delta)));
  const Tensor o_err = add(mul(pv, u), mul(abs(o), std::ldexp(1.0, -7)));
  const Tensor p_delta_err = mul(p, sum(mul(abs(g), o_err), {-1}, true));
  const Tensor ds_err = add(mul(ds, u), p_delta_err);
  std::vector<Tensor> r = {mul(pv, u), mul(matmul(ds_err, abs(k)), scale),
                           mul(matmul(ds_err.transpose(2, 3), abs(q)), scale),
                           mul(matmul(p.transpose(2, 3), abs(g)), u)};
  if (c.mask == 3) {
    const Tensor terms =
        mul(p, add(matmul(abs(g), abs(v).transpose(2, 3)), sum(abs(mul(g, o)), {-1}, true)));
    r.push_back(sum(add(p_delta_err, mul(terms, std::ldexp(1.0, -16))), {1}, true));
  }
  return r;
}

TEST(FastAttentionTest, BFloat16MatchesTheWideningReference) {
  Generator gen(23);
  for (const FastCase& c : fast_cases()) {
    Tensor bool_mask;
    const std::vector<Tensor> in = case_inputs(c, kBFloat16, gen, &bool_mask);
    const Tensor gout = randn({c.B, c.H, c.Tq, c.Dv}, kBFloat16, gen);
    const auto fast = attention_results(in, bool_mask, gout, c, false);
    const auto ref = attention_results(in, bool_mask, gout, c, true);
    const auto scales = bf16_error_scales(in, bool_mask, gout, c);
    ASSERT_EQ(fast.size(), scales.size());
    for (size_t i = 0; i < fast.size(); ++i) {
      ASSERT_EQ(fast[i].dtype(), kBFloat16);
      const auto f = as_doubles(fast[i]), r = as_doubles(ref[i]), e = as_doubles(scales[i]);
      ASSERT_EQ(f.size(), e.size());
      int bad = 0;
      for (size_t j = 0; j < f.size(); ++j) {
        const double tol = std::ldexp(std::abs(r[j]), -7) + 2 * e[j] +
                           std::ldexp(static_cast<double>(c.Tq + c.Tk) * 64, -126);
        if (!(std::abs(f[j] - r[j]) <= tol) && bad++ < 3) {
          ADD_FAILURE() << fmt::format(
              "q ({}, {}, {}, {}) Tk {} Dv {} mask {} layout {}: result {} element {}: fast {}, "
              "reference {}, tolerance {}",
              c.B, c.H, c.Tq, c.D, c.Tk, c.Dv, c.mask, c.layout, i, j, f[j], r[j], tol);
        }
      }
    }
  }
}

TEST(FastAttentionTest, BFloat16FastPathReallyRuns) {
  // The fast path has its own bfloat16 kernels (they do not widen); the reference path has
  // none, so there a bfloat16 attention is the float32 one on widened inputs.
  ASSERT_NE(kernels::attention_forward_bf16.fast(), nullptr);
  ASSERT_NE(kernels::attention_backward_bf16.fast(), nullptr);
  KernelPathGuard guard(KernelPath::kReference);
  EXPECT_EQ(kernels::attention_forward_bf16.get(), nullptr);
  EXPECT_EQ(kernels::attention_backward_bf16.get(), nullptr);
}

}  // namespace
}  // namespace tg
