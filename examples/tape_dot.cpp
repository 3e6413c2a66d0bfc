// examples/tape_dot.cpp — draw the tape of a small computation with Graphviz.
//
//   build/bin/tape_dot [out.dot]        (default: tape.dot in the current directory)
//   dot -Tsvg tape.dot -o tape.svg       (Graphviz: apt install graphviz)
//
// A one-neuron "model" per row, h = x * w + b and loss terms l = h * h, recorded onto the
// tape. The program prints the tape as text (print_tape), runs backward, and writes the
// graph as DOT (to_dot): after the backward the leaves w and b show their values and the
// norm of their gradients.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "core/core.h"
#include "ops/ops.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "tape.dot";

  tg::Generator gen(0);
  const tg::Tensor x = tg::randn({4, 3}, tg::kFloat32, gen);  // data: needs no gradient
  const tg::Tensor w = tg::randn({3}, tg::kFloat32, gen).requires_grad_();
  const tg::Tensor b = tg::zeros({3}).requires_grad_();
  const tg::Tensor h = x * w + b;  // broadcast: w and b are used by every row
  const tg::Tensor l = h * h;

  fmt::print("{}\n", tg::print_tape(l));
  l.backward(tg::ones({4, 3}));
  fmt::print("after backward:\n{}\n", tg::print_tape(l));

  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    fmt::print(stderr, "tape_dot: cannot write {}\n", path);
    return 1;
  }
  fmt::print(file, "{}", tg::to_dot(l));
  std::fclose(file);
  fmt::print("wrote {}; render it with: dot -Tsvg {} -o tape.svg\n", path, path);
  return 0;
}
