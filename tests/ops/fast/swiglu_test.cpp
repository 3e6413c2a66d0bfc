// tests/ops/fast/swiglu_test.cpp — swiglu's and silu_and_mul's fast kernels
// (ops/fast/swiglu.cpp) against the reference kernels, and across thread counts.
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "test_util.h"

namespace {

using tg::Tensor;

std::vector<double> values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }

// d(sum(y * gout))/d(inputs) for y = fn(inputs).
std::vector<Tensor> grads(const Tensor& y, const std::vector<Tensor>& inputs, const Tensor& gout) {
  return tg::grad({y}, inputs, {gout});
}

// The fast kernels compute the reference kernels' formulas, with fast_exp (core/simd.h,
// within 2 ulp of std::exp: tests/core/simd_test.cpp) for std::exp: each result is a
// product of a few rounded factors, so it may differ by a few ulp relative to the size of its
// terms: `scale` below, per element, with 32 ulp of margin. Results below 1e-33 (float) or
// 1e-300 (double) are compared absolutely: there e^a is subnormal and has few bits left.
// bfloat16 runs its own kernels on the fast path (widening a chunk at a time): both paths
// compute in float32 and round once, so they differ by that, plus one bfloat16 unit
// (2^-7 |r|) where the two float32 results round to neighbouring bfloat16 numbers.
struct SwigluScales {
  std::vector<double> out, da, db;
};
SwigluScales swiglu_scales(const Tensor& a, const Tensor& b, const Tensor& dout) {
  const std::vector<double> av = values(a), bv = values(b), gv = values(dout);
  SwigluScales s;
  for (size_t i = 0; i < av.size(); ++i) {
    const double sig = 1 / (1 + std::exp(-av[i]));
    s.out.push_back(std::abs(av[i] * sig * bv[i]));
    s.da.push_back(std::abs(gv[i] * bv[i]) * sig * (1 + std::abs(av[i]) * (1 - sig)));
    s.db.push_back(std::abs(gv[i] * av[i] * sig));
  }
  return s;
}

void expect_within(const Tensor& fast, const Tensor& ref, const std::vector<double>& scale,
                   const std::string& what) {
  const bool f64 = fast.dtype() == tg::kFloat64, bf16 = fast.dtype() == tg::kBFloat16;
  const double ulp = f64 ? 0x1p-52 : 0x1p-23, floor = f64 ? 1e-300 : 1e-33;
  const std::vector<double> f = values(fast), r = values(ref);
  ASSERT_EQ(f.size(), r.size()) << what;
  for (size_t i = 0; i < f.size(); ++i) {
    const double rounding = bf16 ? std::ldexp(std::abs(r[i]), -7) : 0;
    EXPECT_NEAR(f[i], r[i], 32 * ulp * scale[i] + floor + rounding) << what << ", element " << i;
  }
}

// a with some extreme values mixed in: sigmoid's saturated ends and exp's flush to 0.
Tensor awkward_values(const tg::Shape& shape, tg::DType dt, tg::Generator& gen) {
  Tensor t = tg::mul(tg::randn(shape, tg::kFloat64, gen), 4.0);
  std::vector<double> v = values(t);
  const double extremes[] = {0.0, -0.0, 30.0, -30.0, 89.0, -88.0, -100.0, 750.0, -750.0};
  for (size_t i = 0; i < v.size(); i += 5) v[i] = extremes[(i / 5) % 9];
  return tg::tensor(v, shape).to(dt);
}

TEST(FastSwigluTest, MatchTheReference) {
  tg::Generator gen(18);
  for (tg::DType dt : {tg::kFloat32, tg::kFloat64, tg::kBFloat16}) {
    // {3, 1100}: rows longer than the bfloat16 kernels' chunks of 512
    for (const tg::Shape& shape : {tg::Shape{1}, tg::Shape{7}, tg::Shape{129}, tg::Shape{3, 17},
                                   tg::Shape{33, 40}, tg::Shape{2, 3, 31}, tg::Shape{3, 1100}}) {
      // swiglu, with a transposed (non-contiguous) when it has two dims
      const bool swap = shape.size() == 2;
      const Tensor a = swap ? awkward_values({shape[1], shape[0]}, dt, gen).transpose(0, 1)
                            : awkward_values(shape, dt, gen);
      const Tensor b = tg::randn(shape, dt, gen);
      const Tensor dout = tg::randn(shape, dt, gen);
      const SwigluScales sc = swiglu_scales(a, b, dout);
      const std::string what = fmt::format("swiglu {} {}", tg::dtype_name(dt), shape);
      std::vector<Tensor> res[2];
      for (bool reference : {false, true}) {
        tg::KernelPathGuard guard(tg::testing::kernels_for(reference));
        Tensor la = a.detach().requires_grad_(), lb = b.detach().requires_grad_();
        const Tensor y = tg::swiglu(la, lb);
        std::vector<Tensor> g = grads(y, {la, lb}, dout);
        res[reference] = {y, g[0], g[1]};
      }
      expect_within(res[0][0], res[1][0], sc.out, what + " out");
      expect_within(res[0][1], res[1][1], sc.da, what + " da");
      expect_within(res[0][2], res[1][2], sc.db, what + " db");
      // silu_and_mul of [a | b], the halves side by side in one (non-contiguous) tensor
      const int64_t last = static_cast<int64_t>(shape.size()) - 1;
      const Tensor x = tg::cat({a, b}, last);
      std::vector<Tensor> sm[2];
      for (bool reference : {false, true}) {
        tg::KernelPathGuard guard(tg::testing::kernels_for(reference));
        Tensor lx = x.detach().requires_grad_();
        const Tensor y = tg::silu_and_mul(lx);
        sm[reference] = {y, grads(y, {lx}, dout)[0]};
      }
      std::vector<double> dx_scale = sc.da;
      const int64_t h = shape.back();
      for (int64_t r = 0, rows = a.numel() / h; r < rows; ++r) {  // [da | db] per row
        dx_scale.insert(dx_scale.begin() + (2 * r + 1) * h, sc.db.begin() + r * h,
                        sc.db.begin() + (r + 1) * h);
      }
      expect_within(sm[0][0], sm[1][0], sc.out, "silu_and_mul of " + what + " out");
      expect_within(sm[0][1], sm[1][1], dx_scale, "silu_and_mul of " + what + " dx");
    }
  }
}

TEST(FastSwigluTest, BFloat16FastPathReallyRuns) {
  ASSERT_NE(tg::kernels::swiglu_forward_bf16.fast(), nullptr);
  ASSERT_NE(tg::kernels::swiglu_backward_bf16.fast(), nullptr);
  tg::KernelPathGuard guard(tg::KernelPath::kReference);
  EXPECT_EQ(tg::kernels::swiglu_forward_bf16.get(), nullptr);
  EXPECT_EQ(tg::kernels::swiglu_backward_bf16.get(), nullptr);
}

TEST(FastSwigluTest, GiveTheSameBitsOnOneAndTwoThreads) {
  tg::Generator gen(19);
  for (tg::DType dt : {tg::kFloat32, tg::kFloat64}) {
    const Tensor a = tg::randn({300, 700}, dt, gen), b = tg::randn({300, 700}, dt, gen);
    const Tensor x = tg::randn({300, 1400}, dt, gen), dout = tg::randn({300, 700}, dt, gen);
    std::vector<std::vector<double>> res[2];
    for (int threads : {1, 2}) {
      tg::NumThreadsGuard guard(threads);
      Tensor la = a.detach().requires_grad_(), lb = b.detach().requires_grad_();
      Tensor lx = x.detach().requires_grad_();
      const Tensor y = tg::swiglu(la, lb), z = tg::silu_and_mul(lx);
      const auto g = grads(y, {la, lb}, dout);
      res[threads - 1] = {values(y), values(g[0]), values(g[1]), values(z),
                          values(grads(z, {lx}, dout)[0])};
    }
    for (size_t i = 0; i < res[0].size(); ++i) {
      EXPECT_EQ(res[0][i], res[1][i]) << tg::dtype_name(dt) << ", result " << i;
    }
  }
}

}  // namespace
