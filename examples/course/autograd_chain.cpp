// file: examples/course/autograd_chain.cpp
// Chapter 2: the chain rule by hand and by the tape, for loss = (x * w + b)^2 with
// numbers x, w, b; then a fan-out, y = u * u + u, where u is used three times.
#include <fmt/format.h>

#include "core/core.h"
#include "ops/ops.h"

namespace {

tg::Tensor number(double v) { return tg::scalar_tensor(v, tg::kFloat64); }
double value(const tg::Tensor& t) { return t.item<double>(); }

}  // namespace

int main() {
  tg::Tensor x = number(3).requires_grad_();
  tg::Tensor w = number(-2).requires_grad_();
  tg::Tensor b = number(1).requires_grad_();

  // The forward pass. Each op runs and is recorded on the tape.
  const tg::Tensor a = x * w;
  const tg::Tensor z = a + b;
  const tg::Tensor loss = z * z;
  fmt::print("a = x*w = {}, z = a+b = {}, loss = z*z = {}\n\n", value(a), value(z), value(loss));
  fmt::print("{}\n", tg::print_tape(loss));

  // The backward pass by hand: the same three ops, from the last to the first. Each step
  // multiplies the gradient that arrived by the local derivative of one op.
  const double dz = 2 * value(z);                       // loss = z*z: d/dz = 2z
  const double da = dz, db = dz;                        // z = a + b: d/da = d/db = 1
  const double dx = da * value(w), dw = da * value(x);  // a = x*w: d/dx = w, d/dw = x
  fmt::print("by hand: dz = {}, da = {}, dx = {}, dw = {}, db = {}\n", dz, da, dx, dw, db);

  // The backward pass by the tape.
  loss.backward();
  fmt::print("by tape: x.grad = {}, w.grad = {}, b.grad = {}\n\n", value(x.grad()), value(w.grad()),
             value(b.grad()));

  // Fan-out: u reaches y along three edges (two into mul, one into add), and its gradient
  // is the sum of what arrives along each: u + u + 1.
  tg::Tensor u = number(3).requires_grad_();
  const tg::Tensor y = u * u + u;
  fmt::print("{}\n", tg::print_tape(y));
  y.backward();
  fmt::print("dy/du = u + u + 1 = {}\n", value(u.grad()));

  // .grad keeps accumulating across backward calls: a training loop must zero it.
  (u * u + u).backward();
  fmt::print("after a second forward and backward: u.grad = {}\n", value(u.grad()));
}
