// core/random.cpp — random factories.
#include "core/random.h"

#include <cmath>

#include "core/factories.h"

namespace tg {
namespace {

void check_floating(DType dtype, const char* op) {
  TG_CHECK(is_floating_point(dtype), DTypeError, "{}: needs a floating-point dtype, got {}", op,
           dtype);
}

}  // namespace

Tensor rand(const Shape& shape, DType dtype, Generator& gen) {
  check_floating(dtype, "rand");
  Tensor t = empty(shape, dtype);
  visit_dtype(dtype, [&]<class T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      // Only as many random bits as the dtype can hold, so rounding can never reach 1.0.
      if constexpr (std::is_same_v<T, double>) p[i] = gen.uniform_double();
      else if constexpr (std::is_same_v<T, float>) p[i] = gen.uniform_float();
      else if constexpr (std::is_same_v<T, Half>) p[i] = T(float(gen.next_u32() >> 21) * 0x1p-11f);
      else if constexpr (std::is_same_v<T, BFloat16>)
        p[i] = T(float(gen.next_u32() >> 24) * 0x1p-8f);
    }
  });
  return t;
}

Tensor randn(const Shape& shape, DType dtype, Generator& gen) {
  check_floating(dtype, "randn");
  Tensor t = empty(shape, dtype);
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
      T* p = t.data<T>();
      const int64_t n = t.numel();
      for (int64_t i = 0; i < n; i += 2) {
        const auto z = gen.normal_pair();
        p[i] = convert<T>(z[0]);
        if (i + 1 < n) p[i + 1] = convert<T>(z[1]);
      }
    }
  });
  return t;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Generator& gen) {
  TG_CHECK(low < high, ValueError, "randint: low ({}) must be less than high ({})", low, high);
  Tensor out = empty(shape, kInt64);
  int64_t* p = out.data<int64_t>();
  for (int64_t i = 0; i < out.numel(); ++i) p[i] = gen.integer(low, high);
  return dtype == kInt64 ? out : out.to(dtype);
}

Tensor randperm(int64_t n, Generator& gen) {
  TG_CHECK(n >= 0, ValueError, "randperm: n must be non-negative, got {}", n);
  Tensor t = empty(Shape{n}, kInt64);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[gen.integer(0, i + 1)]);
  return t;
}

Tensor bernoulli(const Tensor& p, Generator& gen) {
  check_floating(p.dtype(), "bernoulli");
  const Tensor probs = p.to(kFloat64);  // contiguous, row-major
  const double* q = probs.data<double>();
  for (int64_t i = 0; i < probs.numel(); ++i) {
    TG_CHECK(q[i] >= 0.0 && q[i] <= 1.0, ValueError,
             "bernoulli: probability {} at flat index {} is outside [0, 1]", q[i], i);
  }
  Tensor out = empty(p.shape(), kFloat64);
  double* o = out.data<double>();
  for (int64_t i = 0; i < probs.numel(); ++i) o[i] = gen.uniform_double() < q[i] ? 1.0 : 0.0;
  return out.to(p.dtype());
}

Tensor bernoulli(const Shape& shape, double p, DType dtype, Generator& gen) {
  TG_CHECK(p >= 0.0 && p <= 1.0, ValueError, "bernoulli: probability {} is outside [0, 1]", p);
  Tensor out = empty(shape, kFloat64);
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = gen.uniform_double() < p ? 1.0 : 0.0;
  return out.to(dtype);
}

}  // namespace tg
