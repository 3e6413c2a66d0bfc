// file: examples/course/mixed_bf16_dot.cpp
// Chapter 20: where a bfloat16 matrix product loses accuracy. Every product of two bfloat16
// values is exact in float32; the float32 sums round, within gamma_k * sum |a| |b|; and
// rounding the inputs to bfloat16 in the first place costs far more than either.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "core/core.h"

namespace {

std::vector<float> to_bfloat16(const std::vector<float>& v) {
  std::vector<float> out;
  for (const float x : v) out.push_back(static_cast<float>(tg::BFloat16(x)));
  return out;
}

}  // namespace

int main() {
  tg::Generator gen(20);
  const double u = 0x1p-24;  // float32's unit roundoff
  int64_t products = 0, inexact = 0;
  fmt::print("the worst of 10 dot products of each length k, absolute errors:\n");
  fmt::print("{:>6} {:>16} {:>16} {:>22}\n", "k", "float32 sum error", "bound",
             "bfloat16 input error");
  for (const int64_t k : {16, 256, 4096, 65536}) {
    double worst_sum = 0, worst_bound = 0, worst_inputs = 0;
    for (int trial = 0; trial < 10; ++trial) {
      const std::vector<float> a32 = tg::randn({k}, tg::kFloat32, gen).to_vector<float>();
      const std::vector<float> b32 = tg::randn({k}, tg::kFloat32, gen).to_vector<float>();
      const std::vector<float> a = to_bfloat16(a32), b = to_bfloat16(b32);
      float c = 0;  // the bfloat16 kernel: exact products, float32 sums
      double exact = 0, exact32 = 0, abs_sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const float prod = a[p] * b[p];
        const double prod_exact = static_cast<double>(a[p]) * b[p];  // 16 bits: exact in double
        ++products;
        inexact += static_cast<double>(prod) != prod_exact;
        c += prod;
        exact += prod_exact;
        exact32 += static_cast<double>(a32[p]) * b32[p];  // the same sum before the rounding
        abs_sum += std::fabs(prod_exact);
      }
      const double gamma = static_cast<double>(k) * u / (1 - static_cast<double>(k) * u);
      worst_sum = std::max(worst_sum, std::fabs(c - exact));
      worst_bound = std::max(worst_bound, gamma * abs_sum);
      worst_inputs = std::max(worst_inputs, std::fabs(exact - exact32));
    }
    fmt::print("{:>6} {:>16.3e} {:>16.3e} {:>22.3e}\n", k, worst_sum, worst_bound, worst_inputs);
  }
  fmt::print("\n{} bfloat16 products, {} of them inexact in float32\n", products, inexact);
}
