// file: examples/course/softmax_overflow.cpp
// Chapter 7: why softmax subtracts the row maximum, and why log_softmax is not log(softmax).
#include <fmt/format.h>

#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace {

void print_row(const char* name, const tg::Tensor& t) {
  fmt::print("  {:<32}", name);
  for (double e : t.to(tg::kFloat64).to_vector<double>()) fmt::print(" {:>10.6g}", e);
  fmt::print("\n");
}

/// The textbook formula, exp(x) / sum(exp(x)), with no shift.
tg::Tensor naive_softmax(const tg::Tensor& x) {
  const tg::Tensor e = tg::exp(x);
  return tg::div(e, tg::sum(e, {-1}, /*keepdim=*/true));
}

}  // namespace

int main() {
  // Logits of a few hundred or thousand are ordinary at a language model's head.
  const tg::Tensor big = tg::tensor({1000.0, 999.0, 998.0});
  fmt::print("logits (1000, 999, 998) in float64:\n");
  print_row("exp(x)", tg::exp(big));
  print_row("naive exp(x) / sum(exp(x))", naive_softmax(big));
  print_row("exp(x - max) / sum(...)", naive_softmax(tg::sub(big, 1000.0)));
  print_row("tg::softmax", tg::softmax(big, -1));

  // float32 overflows much sooner: exp(89) > 3.4e38, its largest value.
  const tg::Tensor f = tg::tensor({90.f, 10.f, 0.f});
  fmt::print("logits (90, 10, 0) in float32:\n");
  print_row("naive exp(x) / sum(exp(x))", naive_softmax(f));
  print_row("tg::softmax", tg::softmax(f, -1));

  // The other end: a probability that underflows to 0 has log = -inf, but its log is fine.
  const tg::Tensor small = tg::tensor({-1000.0, 0.0});
  fmt::print("logits (-1000, 0):\n");
  print_row("tg::softmax", tg::softmax(small, -1));
  print_row("log(tg::softmax)", tg::log(tg::softmax(small, -1)));
  print_row("tg::log_softmax", tg::log_softmax(small, -1));
}
