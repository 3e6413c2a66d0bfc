// core/generator.cpp — Philox4x32-10 and the distributions built on it.
//
// Like all of tapegrad but the fast kernels, this file is compiled with -ffp-contract=off (see
// tapegrad_target_defaults in CMakeLists.txt): otherwise the compiler may fuse a*b+c into one
// FMA instruction on CPUs that have it and not on others, and the normals would differ in the
// last bit between machines.
#include "core/generator.h"

#include <bit>
#include <cmath>

#include "core/error.h"

namespace tg {
namespace {

// Philox constants: two odd multipliers and the key increments (the golden ratio and
// sqrt(3) - 1, as 32-bit fractions).
constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

// log(x) for finite x > 0, from + - * / and exact bit manipulation only.
// Write x = m * 2^k with m in [sqrt(1/2), sqrt(2)); then log x = k log 2 + log m and
// log m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), with s = (m - 1) / (m + 1), |s| < 0.172,
// so 13 terms reach double precision.
double portable_log(double x) {
  uint64_t bits = std::bit_cast<uint64_t>(x);
  int k = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52);  // m in [1, 2)
  double m = std::bit_cast<double>(bits);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++k;
  }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double series = 0.0;
  for (int n = 25; n >= 3; n -= 2) series = (series + 1.0 / n) * s2;
  return static_cast<double>(k) * 0.6931471805599453 + 2.0 * s * (1.0 + series);
}

}  // namespace

std::array<uint32_t, 4> Generator::philox(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    const uint64_t p0 = uint64_t{kMul0} * c[0];
    const uint64_t p1 = uint64_t{kMul1} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

void Generator::manual_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint32_t Generator::next_u32() {
  // Recomputing the block for each word keeps the state tiny; a 4-word cache would be
  // faster, and bulk fills (random.cpp) can use philox() directly if it ever matters.
  const uint64_t block = offset_ / 4;
  const auto words =
      philox({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0},
             {static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32)});
  return words[offset_++ % 4];
}

uint64_t Generator::next_u64() {
  const uint64_t hi = next_u32();
  return (hi << 32) | next_u32();
}

float Generator::uniform_float() { return static_cast<float>(next_u32() >> 8) * 0x1p-24f; }

double Generator::uniform_double() { return static_cast<double>(next_u64() >> 11) * 0x1p-53; }

std::array<double, 2> Generator::normal_pair() {
  // Polar method: a point uniform in the unit disc (rejecting the corners of the square)
  // gives two independent normals u*m and v*m with m = sqrt(-2 log(s) / s).
  double u, v, s;
  do {
    u = 2.0 * uniform_double() - 1.0;
    v = 2.0 * uniform_double() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double m = std::sqrt(-2.0 * portable_log(s) / s);  // sqrt is exactly rounded
  return {u * m, v * m};
}

int64_t Generator::integer(int64_t low, int64_t high) {
  TG_CHECK(low < high, ValueError, "randint: low ({}) must be less than high ({})", low, high);
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  // 2^64 mod span values at the bottom would be hit once more than the others: skip them.
  const uint64_t threshold = (0 - span) % span;
  uint64_t x;
  do x = next_u64();
  while (x < threshold);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + x % span);
}

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace tg
