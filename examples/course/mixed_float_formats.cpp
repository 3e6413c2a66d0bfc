// file: examples/course/mixed_float_formats.cpp
// Chapter 20: float32, float16 and bfloat16 bit by bit. First the limits of each format,
// computed from its bit patterns; then a few values rounded to each format, with the bits
// (sign | exponent | mantissa) and the value each format stores.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/core.h"

namespace {

// A format with E exponent bits and M mantissa bits: its 1 + E + M bits as "s | e | m".
std::string fields(uint32_t bits, int e, int m) {
  std::string s;
  for (int i = e + m; i >= 0; --i) {
    s += ((bits >> i) & 1U) ? '1' : '0';
    if (i == e + m || i == m) s += " | ";
  }
  return s;
}

// What became of x in a format: overflowed, underflowed, a subnormal (fewer bits), rounded
// to a neighbour, or kept exactly.
std::string note(double x, float stored, uint32_t bits, int e, int m) {
  const uint32_t exponent = (bits >> m) & ((1U << e) - 1);
  if (std::isinf(stored)) return "overflow to inf";
  if (stored == 0 && x != 0) return "underflow to 0";
  if (exponent == 0 && stored != 0) return "subnormal";
  return static_cast<double>(stored) == x ? "exact" : "rounded";
}

void row(const char* name, double x, float stored, uint32_t bits, int e, int m) {
  fmt::print("  {:<9} {:<39} {:<16} {}\n", name, fields(bits, e, m), stored,
             note(x, stored, bits, e, m));
}

// x rounded to each format, once, straight from the double.
void show(const char* label, double x) {
  fmt::print("{}\n", label);
  const auto f = static_cast<float>(x);
  row("float32", x, f, std::bit_cast<uint32_t>(f), 8, 23);
  const tg::Half h(x);
  row("float16", x, static_cast<float>(h), h.bits, 5, 10);
  const tg::BFloat16 b(x);
  row("bfloat16", x, static_cast<float>(b), b.bits, 8, 7);
}

// The limits of a format with E exponent and M mantissa bits, read off its own bit patterns
// by `widen` (bits -> the value they stand for): the largest finite value (exponent all ones
// but the last, mantissa all ones), the smallest normal (exponent 1, mantissa 0), the
// smallest subnormal (exponent 0, mantissa 1) and the gap between 1 and the next value.
template <class Widen>
void limits(const char* name, int e, int m, Widen widen) {
  const uint32_t bias = (1U << (e - 1)) - 1;
  const float largest = widen(((((1U << e) - 2)) << m) | ((1U << m) - 1));
  const float normal = widen(1U << m), subnormal = widen(1U);
  const float gap = widen((bias << m) | 1U) - 1.0f;
  auto power = [](float v) { return fmt::format("2^{} = {}", std::ilogb(v), v); };
  fmt::print("{:<9} 1|{}|{:<3} {:>4}  {:<14} {:<23} {:<23} {}\n", name, e, m, bias, largest,
             power(normal), power(subnormal), power(gap));
}

}  // namespace

int main() {
  fmt::print("{:<9} {:<7} {:>4}  {:<14} {:<23} {:<23} {}\n", "format", "layout", "bias", "largest",
             "smallest normal", "smallest subnormal", "gap after 1");
  limits("float32", 8, 23, [](uint32_t b) { return std::bit_cast<float>(b); });
  limits("float16", 5, 10, [](uint32_t b) {
    return static_cast<float>(tg::Half::from_bits(static_cast<uint16_t>(b)));
  });
  limits("bfloat16", 8, 7, [](uint32_t b) {
    return static_cast<float>(tg::BFloat16::from_bits(static_cast<uint16_t>(b)));
  });
  fmt::print("\n");

  show("1", 1.0);
  show("0.1", 0.1);
  show("1/3", 1.0 / 3.0);
  show("65504", 65504.0);
  show("65520", 65520.0);
  show("1e-5", 1e-5);
  show("1e-8", 1e-8);
  show("3e38", 3e38);
  show("1 + 2^-8", 1.0 + 0x1p-8);
  show("1 + 3*2^-8", 1.0 + 3 * 0x1p-8);
  show("300^2", 300.0 * 300.0);
}
