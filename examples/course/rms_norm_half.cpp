// file: examples/course/rms_norm_half.cpp
// Chapter 6: why rms_norm squares float16 inputs in float32, and the fused add_rms_norm.
#include <fmt/format.h>

#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace {

void print_row(const char* name, const tg::Tensor& t) {
  fmt::print("  {:<35} {:<8}", name, tg::dtype_name(t.dtype()));
  for (double e : t.to(tg::kFloat64).to_vector<double>()) fmt::print(" {:>8.4f}", e);
  fmt::print("\n");
}

}  // namespace

int main() {
  using tg::kFloat16;
  // One row whose RMS is 300: fine in float16 (max 65504), but 300^2 = 90000 is not.
  const tg::Tensor x = tg::tensor({300.0, -300.0, 150.0, -150.0}).to(kFloat16);
  const tg::Tensor w = tg::ones({4}, kFloat16);
  print_row("x", x);
  print_row("x * x in float16", tg::mul(x, x));
  const tg::Tensor naive =
      tg::mul(tg::mul(x, tg::rsqrt(tg::add(tg::mean(tg::mul(x, x), {-1}, true), 1e-5))), w);
  print_row("composed in float16", naive);
  print_row("tg::rms_norm (squares in float32)", tg::rms_norm(x, w));

  // The fused add-norm, with x as the residual stream: it takes a branch's output,
  // x + branch, and is normalised for the next branch, rms_norm(x + branch), in one op.
  const tg::Tensor branch = tg::tensor({-100.0, 100.0, 50.0, -50.0}).to(kFloat16);
  const tg::AddRmsNormOutput o = tg::add_rms_norm(/*residual=*/x, branch, w);
  print_row("add_rms_norm(x, branch, w).residual", o.residual);
  print_row("add_rms_norm(x, branch, w).out", o.out);
}
