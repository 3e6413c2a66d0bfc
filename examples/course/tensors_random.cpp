// file: examples/course/tensors_random.cpp
// Chapter 1: seeded random numbers. Philox is counter-based: word n of a seed's stream is
// a pure function of (seed, n), so these numbers are the same on every machine.
#include <fmt/format.h>

#include "core/core.h"

int main() {
  tg::Generator gen(42);
  const tg::Tensor a = tg::randn({2, 3}, tg::kFloat32, gen);
  fmt::print("randn with seed 42:\n{}\n", a);
  fmt::print("words used so far: {}\n", gen.offset());

  // The same seed restarts the same stream.
  gen.manual_seed(42);
  const tg::Tensor b = tg::randn({2, 3}, tg::kFloat32, gen);
  fmt::print("again with seed 42, identical: {}\n", a.to_vector<float>() == b.to_vector<float>());

  // The state is just (seed, offset): jump to word 3 and read it directly.
  tg::Generator walker(7);
  for (int i = 0; i < 4; ++i) fmt::print("word {} of seed 7: {:#010x}\n", i, walker.next_u32());
  tg::Generator jumper(7);
  jumper.set_offset(3);
  fmt::print("after set_offset(3):   {:#010x}\n", jumper.next_u32());

  // Other distributions draw from the same kind of stream.
  tg::Generator g(0);
  fmt::print("\nrand:     {}\n", tg::rand({4}, tg::kFloat32, g));
  fmt::print("randint:  {}\n", tg::randint(0, 10, {8}, tg::kInt64, g));
  fmt::print("randperm: {}\n", tg::randperm(6, g));
}
