// file: examples/course/dropout_masks.cpp
// Chapter 10: inverted dropout. The mask from a seeded Generator, the 1/(1-p) scale, the same
// mask in the backward, train vs eval, and the statistics over many elements.
#include <fmt/format.h>

#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace {

void print_row(const char* name, const tg::Tensor& t) {
  fmt::print("  {:<22}", name);
  for (double v : t.to(tg::kFloat64).to_vector<double>()) fmt::print(" {:5.2f}", v);
  fmt::print("\n");
}

}  // namespace

int main() {
  const double p = 0.5;  // drop half, scale the rest by 1 / (1 - p) = 2
  const tg::Tensor x = tg::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}).requires_grad_();
  print_row("x", x);

  tg::Generator gen(2036);
  const tg::Tensor y = tg::dropout(x, p, /*training=*/true, gen);
  print_row("dropout(x), seed 2036", y);
  const tg::Tensor y_next = tg::dropout(x, p, true, gen);
  print_row("again, same generator", y_next);
  tg::Generator replay(2036);
  print_row("a new generator, 2036", tg::dropout(x, p, true, replay));

  // The backward uses the mask saved by the forward: dx = dout * mask / (1 - p).
  fmt::print("  node '{}' saved {} bytes (one bool per element)\n", y.grad_fn()->name(),
             y.grad_fn()->saved_bytes());
  const tg::Tensor dx = tg::grad({y}, {x}, {tg::ones({8}, tg::kFloat64)})[0];
  print_row("dx for dout = 1", dx);

  // Evaluation: the identity, and x itself is returned.
  const tg::Tensor e = tg::dropout(x, p, /*training=*/false, gen);
  fmt::print("eval mode returns x itself: {}\n", e.impl() == x.impl() ? "yes" : "no");

  // Over many elements: about 1 - p are kept, and the mean is kept too (inverted dropout).
  tg::Generator big_gen(7);
  const int64_t n = 1000000;
  const tg::Tensor yb = tg::dropout(tg::ones({n}, tg::kFloat32), 0.1, true, big_gen);
  int64_t kept = 0;
  double total = 0;
  for (float v : yb.to_vector<float>()) {
    kept += v != 0.0f;
    total += v;
  }
  fmt::print("p = 0.1 on 1e6 ones: kept {:.4f} of them, mean {:.4f}\n",
             static_cast<double>(kept) / n, total / n);
}
