// tests/support/test_util.h — shared helpers for tapegrad's GoogleTest suites.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/core.h"
#include "ops/ops.h"

namespace tg::testing {

/// The kernel path a test asks for with a bool (tests/ops/fast/ run both, ops/kernels.h):
/// reference = true is the reference kernels, false the fast ones.
inline KernelPath kernels_for(bool reference) {
  return reference ? KernelPath::kReference : KernelPath::kFast;
}

/// Every dtype, for tests that loop over them.
inline constexpr DType kAllDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool};

/// Every element of `t` as a double, in row-major order, whatever its dtype.
inline std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out;
  visit_dtype(t.dtype(), [&]<class T>() {
    for (const T& v : t.to_vector<T>()) out.push_back(convert<double>(v));
  });
  return out;
}

/// A float64 leaf of standard normals that requires grad.
inline Tensor leaf(const Shape& shape, Generator& gen) {
  return randn(shape, kFloat64, gen).requires_grad_();
}

/// A non-contiguous float64 leaf: randn(shape) with dims d0 and d1 swapped.
inline Tensor swapped_leaf(const Shape& shape, int64_t d0, int64_t d1, Generator& gen) {
  return randn(shape, kFloat64, gen).transpose(d0, d1).requires_grad_();
}

/// d(sum(grad_out * y))/dx, without touching .grad.
inline Tensor grad_of(const Tensor& y, const Tensor& x, const Tensor& grad_out) {
  return grad({y}, {x}, {grad_out})[0];
}

/// GoogleTest adapter for tg::gradcheck: EXPECT_TRUE(GradcheckPasses(fn, {x, w})) fails with
/// gradcheck's message (input, element, analytic and numeric values, tolerance).
inline ::testing::AssertionResult GradcheckPasses(
    const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
    const GradcheckOptions& options = {}) {
  const GradcheckResult r = gradcheck(fn, inputs, options);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

/// Matches an exception message that contains every one of `parts`.
template <class... Parts>
auto MessageHas(const Parts&... parts) {
  return ::testing::AllOf(::testing::HasSubstr(std::string(parts))...);
}

}  // namespace tg::testing

/// EXPECT_GRADCHECK(fn, inputs[, options]): the backward of fn agrees with finite differences.
#define EXPECT_GRADCHECK(...) EXPECT_TRUE(::tg::testing::GradcheckPasses(__VA_ARGS__))

/// Asserts that `statement` throws tg::Kind (exactly that kind or a subclass) with a message
/// containing each of the strings that follow, e.g.
///   EXPECT_TG_THROW(x.view({5}), ShapeError, "view", "(2, 3)");
#define EXPECT_TG_THROW(statement, Kind, ...) \
  EXPECT_THAT([&] { (void)(statement); },     \
              ::testing::ThrowsMessage<::tg::Kind>(::tg::testing::MessageHas(__VA_ARGS__)))
