// file: examples/course/rope_float32_angles.cpp
// Chapter 11: why tg::rope computes its angles in double. At position 4099 the second pair
// turns by ~3000 rad; in float32 that angle is only known to within 2^-12 rad.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

int main() {
  const int64_t position = 4099;
  const int64_t d = 64;
  fmt::print("position {}, D = {}, theta = 10000\n", position, d);
  fmt::print("{:>5} {:>16} {:>14} {:>14}\n", "pair", "angle (rad)", "f32 angle err", "cos err");
  for (int64_t i : {1, 2, 3, 10}) {
    const double inv_freq = std::pow(10000.0, -2.0 * static_cast<double>(i) / d);
    const double angle = static_cast<double>(position) * inv_freq;
    // The float32 way: both factors rounded to float, multiplied in float.
    const float angle32 = static_cast<float>(position) * static_cast<float>(inv_freq);
    fmt::print("{:>5} {:>16.9f} {:>14.2e} {:>14.2e}\n", i, angle,
               std::abs(static_cast<double>(angle32) - angle),
               std::abs(std::cos(static_cast<double>(angle32)) - std::cos(angle)));
  }
  // tg::rope on float32 input: angles in double, cos/sin rounded once, so it agrees with the
  // float64 result to float32 precision.
  std::vector<double> ones(d, 1.0);
  const tg::Tensor x64 = tg::tensor(ones, {1, d});
  const tg::Tensor p = tg::tensor(std::vector<int64_t>{position});
  const std::vector<double> y64 = tg::rope(x64, p).to_vector<double>();
  const std::vector<double> y32 =
      tg::rope(x64.to(tg::kFloat32), p).to(tg::kFloat64).to_vector<double>();
  double err = 0;
  for (size_t j = 0; j < y64.size(); ++j) err = std::max(err, std::abs(y32[j] - y64[j]));
  fmt::print("tg::rope float32 vs float64, largest difference: {} 1e-7\n",
             err < 1e-7 ? "below" : "ABOVE");
  return 0;
}
