// tests/ops/fast/attention_test.cpp — attention's fast kernels (ops/fast/attention.cpp):
// blocked GEMM per (batch, head) slice, query blocks of 64 rows, a polynomial exp for float32,
// against the reference loops on awkward sizes, and across thread counts.
#include <cmath>

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

/// out, then the gradients of every input in `in`, on the path `reference` picks.
std::vector<Tensor> attention_results(const std::vector<Tensor>& in, const Tensor& bool_mask,
                                      const Tensor& gout, const FastCase& c, bool reference) {
  KernelPathGuard path(testing::kernels_for(reference));
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

TEST(FastAttentionTest, AgreesWithTheReference) {
  // The paths differ in rounding only: each value is a sum of at most 130 products, added in
  // another order (blocked GEMM with fused multiply-adds, 16 partial sums in the softmax) and
  // with another exp (a polynomial within 1 ulp of libm's in float32). Such sums agree to a few
  // ulp of the sum of |terms|, which grows with the sizes and with cancellation in the gradients;
  // for standard normal inputs at these sizes the worst seen was 1.3e-5 (float32, ulp 1.2e-7)
  // and 1.1e-13 (float64) times (1 + |value|): the bounds leave a factor of about 8.
  for (const DType dt : {kFloat32, kFloat64}) {
    const double tol = dt == kFloat32 ? 1e-4 : 1e-12;
    Generator gen(21);
    for (const FastCase& c : fast_cases()) {
      Tensor bool_mask;
      const std::vector<Tensor> in = case_inputs(c, dt, gen, &bool_mask);
      const Tensor gout = randn({c.B, c.H, c.Tq, c.Dv}, dt, gen);
      const auto fast = attention_results(in, bool_mask, gout, c, false);
      const auto ref = attention_results(in, bool_mask, gout, c, true);
      ASSERT_EQ(fast.size(), ref.size());
      for (size_t i = 0; i < fast.size(); ++i) {
        ASSERT_EQ(fast[i].shape(), ref[i].shape());
        const auto f = as_doubles(fast[i]), r = as_doubles(ref[i]);
        for (size_t e = 0; e < f.size(); ++e) {
          ASSERT_NEAR(f[e], r[e], tol * (1 + std::abs(r[e]))) << fmt::format(
              "{} q ({}, {}, {}, {}) Tk {} Dv {} mask {} layout {}: result {} element {}", dt, c.B,
              c.H, c.Tq, c.D, c.Tk, c.Dv, c.mask, c.layout, i, e);
        }
      }
    }
  }
}

TEST(FastAttentionTest, IsBitIdenticalForOneAndTwoThreads) {
  // Threads take whole (batch, head) slices, so every number is computed by the same code in
  // the same order whatever the thread count.
  Generator gen(22);
  for (const FastCase& c :
       {FastCase{2, 2, 129, 129, 16, 16, 1, 1}, FastCase{3, 1, 100, 80, 24, 8, 3, 0}}) {
    Tensor bool_mask;
    const std::vector<Tensor> in = case_inputs(c, kFloat32, gen, &bool_mask);
    const Tensor gout = randn({c.B, c.H, c.Tq, c.Dv}, kFloat32, gen);
    std::vector<Tensor> one, two;
    {
      NumThreadsGuard threads(1);
      one = attention_results(in, bool_mask, gout, c, false);
    }
    {
      NumThreadsGuard threads(2);
      two = attention_results(in, bool_mask, gout, c, false);
    }
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(one[i].to_vector<float>(), two[i].to_vector<float>()) << "result " << i;
    }
  }
}

}  // namespace
}  // namespace tg
