// file: examples/quickstart.cpp
#include <fmt/format.h>

#include "core/core.h"

int main() {
  tg::Generator gen(0);                                 // seeded: same numbers everywhere
  tg::Tensor x = tg::randn({2, 3}, tg::kFloat32, gen);  // a (2, 3) matrix
  tg::Tensor col = x.select(1, 0);                      // a view of column 0, no copy
  col.fill_(1.0);                                       // ... writes through to x
  tg::Tensor y = x.t().contiguous().to(tg::kFloat16);   // transpose, copy, convert
  fmt::print("{}\n{}\nstrides {} -> {}\n", x, y, x.t().strides(), y.strides());
}
