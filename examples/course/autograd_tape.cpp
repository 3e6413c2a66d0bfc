// file: examples/course/autograd_tape.cpp
// Chapter 2: the tape of a tiny model, as text and as a Graphviz graph. Each row of x
// goes through h = x * w + b (w and b broadcast over the rows) and is squared.
#include <fmt/format.h>

#include "core/core.h"
#include "ops/ops.h"

int main() {
  tg::Generator gen(0);
  const tg::Tensor x = tg::randn({4, 3}, tg::kFloat32, gen);  // data: no gradient needed
  const tg::Tensor w = tg::randn({3}, tg::kFloat32, gen).requires_grad_();
  const tg::Tensor b = tg::zeros({3}).requires_grad_();

  const tg::Tensor h = x * w + b;
  const tg::Tensor l = h * h;
  fmt::print("{}\n", tg::print_tape(l));

  l.backward(tg::ones({4, 3}));  // l is not a scalar: pass d(loss)/d(l) explicitly
  fmt::print("after backward:\n{}\n", tg::print_tape(l));
  fmt::print("{}", tg::to_dot(l));
}
