// tests/ops/fast/activation_test.cpp — relu's and silu's fast kernels (ops/fast/activation.cpp)
// against their reference kernels, and across thread counts.
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "test_util.h"

namespace {

using tg::Tensor;

std::vector<double> values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }

// silu's fast kernels (float, double) evaluate the plain kernels' formulas with a
// vectorisable exp within 2 ulp of std::exp (tests/ops/swiglu_test.cpp checks it); y and dx
// are products of a few rounded factors, so they may differ by a few ulp relative to the size
// of their terms — |x * s| for y, |dy| * s * (1 + |x| (1 - s)) for dx — 32 ulp here, plus
// 1e-33 (float) / 1e-300 (double) where e^x is below the smallest normal number and the fast
// exp gives 0.
// op(x) and its gradient for dy, on the fast kernels ([0]) and on the plain loops ([1]).
struct BothPaths {
  std::vector<double> y[2], dx[2];
};
BothPaths on_both_paths(Tensor (*op)(const Tensor&, tg::Here), const Tensor& x, const Tensor& dy) {
  BothPaths r;
  for (bool reference : {false, true}) {
    tg::KernelPathGuard guard(tg::testing::kernels_for(reference));
    Tensor leaf = x.detach().requires_grad_();
    const Tensor out = op(leaf, tg::Here::current());
    r.y[reference] = values(out);
    r.dx[reference] = values(tg::grad({out}, {leaf}, {dy})[0]);
  }
  return r;
}

// values v as a tensor of `shape` in dtype dt, transposed when 2-D (so not contiguous).
Tensor laid_out(const std::vector<double>& v, const tg::Shape& shape, tg::DType dt) {
  Tensor x = tg::tensor(v, shape).to(dt);
  return shape.size() == 2 ? x.transpose(0, 1) : x;
}

TEST(FastActivationTest, SiluFastKernelsMatchTheReference) {
  tg::Generator gen(21);
  for (tg::DType dt : {tg::kFloat32, tg::kFloat64}) {
    const double ulp = dt == tg::kFloat32 ? 0x1p-23 : 0x1p-52;
    const double floor = dt == tg::kFloat32 ? 1e-33 : 1e-300;
    for (const tg::Shape& shape :
         {tg::Shape{1}, tg::Shape{7}, tg::Shape{17, 3}, tg::Shape{129, 5}}) {
      // a transposed (non-contiguous) x, with sigmoid's saturated ends and exp's flush mixed in
      std::vector<double> v = values(tg::mul(tg::randn(shape, tg::kFloat64, gen), 4.0));
      const double extremes[] = {0.0, 30.0, -30.0, -88.0, -100.0, 750.0, -750.0};
      for (size_t i = 0; i < v.size(); i += 4) v[i] = extremes[(i / 4) % 7];
      const Tensor x = laid_out(v, shape, dt);
      const Tensor dy = tg::randn(x.shape(), dt, gen);
      const auto [y, dx] = on_both_paths(tg::silu, x, dy);
      const std::vector<double> xv = values(x), gv = values(dy);
      for (size_t i = 0; i < xv.size(); ++i) {
        const double s = 1 / (1 + std::exp(-xv[i]));
        const double y_scale = std::abs(xv[i] * s);
        const double dx_scale = std::abs(gv[i]) * s * (1 + std::abs(xv[i]) * (1 - s));
        EXPECT_NEAR(y[0][i], y[1][i], 32 * ulp * y_scale + floor) << shape << " y " << i;
        EXPECT_NEAR(dx[0][i], dx[1][i], 32 * ulp * dx_scale + floor) << shape << " dx " << i;
      }
    }
  }
}

// relu's fast kernels select, they do not compute: values and gradients must equal the
// reference loops exactly, kinks (0, -0) and NaN included, in the vector groups of 16 and in
// the remainders, on transposed inputs too.
TEST(FastActivationTest, ReluFastKernelsEqualTheReference) {
  tg::Generator gen(23);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (tg::DType dt : {tg::kFloat32, tg::kFloat64}) {
    for (const tg::Shape& shape :
         {tg::Shape{1}, tg::Shape{7}, tg::Shape{17, 3}, tg::Shape{129, 5}}) {
      std::vector<double> v = values(tg::randn(shape, tg::kFloat64, gen));
      const double kinks[] = {0.0, -0.0, nan, 1e-30, -1e-30};
      for (size_t i = 0; i < v.size(); i += 3) v[i] = kinks[(i / 3) % 5];
      const Tensor x = laid_out(v, shape, dt);
      const Tensor dy = tg::randn(x.shape(), dt, gen);
      const auto [y, dx] = on_both_paths(tg::relu, x, dy);
      ASSERT_EQ(y[0].size(), y[1].size());
      for (size_t i = 0; i < y[0].size(); ++i) {
        if (std::isnan(y[1][i])) {
          EXPECT_TRUE(std::isnan(y[0][i])) << shape << " y " << i;
        } else {
          EXPECT_EQ(y[0][i], y[1][i]) << shape << " y " << i;
        }
        EXPECT_EQ(dx[0][i], dx[1][i]) << shape << " dx " << i;
      }
    }
  }
}

TEST(FastActivationTest, SiluAndReluFastKernelsGiveTheSameBitsOnOneAndTwoThreads) {
  tg::Generator gen(22);
  for (tg::DType dt : {tg::kFloat32, tg::kFloat64}) {
    const Tensor x = tg::randn({300, 700}, dt, gen), dy = tg::randn({300, 700}, dt, gen);
    std::vector<double> y[2], dx[2], relu_y[2], relu_dx[2];
    for (int threads : {1, 2}) {
      tg::NumThreadsGuard guard(threads);
      Tensor leaf = x.detach().requires_grad_();
      const Tensor out = tg::silu(leaf), r = tg::relu(leaf);
      y[threads - 1] = values(out);
      dx[threads - 1] = values(tg::grad({out}, {leaf}, {dy})[0]);
      relu_y[threads - 1] = values(r);
      relu_dx[threads - 1] = values(tg::grad({r}, {leaf}, {dy})[0]);
    }
    EXPECT_EQ(y[0], y[1]) << tg::dtype_name(dt);
    EXPECT_EQ(dx[0], dx[1]) << tg::dtype_name(dt);
    EXPECT_EQ(relu_y[0], relu_y[1]) << tg::dtype_name(dt);
    EXPECT_EQ(relu_dx[0], relu_dx[1]) << tg::dtype_name(dt);
  }
}

}  // namespace
