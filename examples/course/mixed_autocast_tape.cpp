// file: examples/course/mixed_autocast_tape.cpp
// Chapter 20: what autocast puts on the tape. A small residual network (RMSNorm, two
// linears with a ReLU, a residual add, an output head, cross-entropy) runs its forward
// under AutocastGuard(kBFloat16); the tape shows every cast as a `to` node and the dtype
// each op ran in. The backward then brings every gradient home in float32.
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace {

// A float32 weight, a leaf that requires grad: what an nn module registers as a parameter.
tg::Tensor weight(tg::Shape shape, double scale, tg::Generator& gen) {
  return tg::mul(tg::randn(shape, tg::kFloat32, gen), scale).requires_grad_();
}

}  // namespace

int main() {
  tg::Generator gen(20);
  const tg::Tensor x = tg::randn({4, 8}, tg::kFloat32, gen);  // 4 rows of 8 features
  const tg::Tensor y = tg::tensor(std::vector<int64_t>{0, 2, 1, 2});
  const tg::Tensor norm_w = tg::ones({8}).requires_grad_();
  const tg::Tensor w1 = weight({16, 8}, 0.35, gen), b1 = weight({16}, 0.1, gen);
  const tg::Tensor w2 = weight({8, 16}, 0.25, gen), b2 = weight({8}, 0.1, gen);
  const tg::Tensor head = weight({3, 8}, 0.35, gen), bh = weight({3}, 0.1, gen);

  tg::Tensor loss;
  {
    tg::AutocastGuard autocast(tg::kBFloat16);
    const tg::Tensor h = tg::rms_norm(x, norm_w);            // promote: all float32, so float32
    const tg::Tensor a = tg::relu(tg::linear(h, w1, b1));    // low precision; relu has no rule
    const tg::Tensor r = tg::add(x, tg::linear(a, w2, b2));  // promote: float32 + bfloat16
    loss = tg::cross_entropy(tg::linear(r, head, bh), y);    // in float32, from bfloat16 logits
  }
  fmt::print("{}\n", tg::print_tape(loss));

  // Each op's input and output dtypes, from the same tape.
  int n = 0;
  for (const tg::TapeEntry& e : tg::tape_entries(loss)) {
    std::vector<std::string_view> in, out;
    for (const tg::TensorMeta& m : e.inputs) in.push_back(tg::dtype_name(m.dtype));
    for (const tg::TensorMeta& m : e.outputs) out.push_back(tg::dtype_name(m.dtype));
    const std::string ins = fmt::format("{}", fmt::join(in, ", "));
    fmt::print("  #{:<3} {:<14} {:<35} -> {}\n", n++, e.op, ins, fmt::join(out, ", "));
  }

  // The backward runs with autocast off, each op in the dtypes its forward saved; the casts'
  // own backwards turn the bfloat16 gradients of the copies into float32 ones.
  loss.backward();
  fmt::print("\nloss {} ({})\n", loss.item<float>(), tg::dtype_name(loss.dtype()));
  const std::vector<std::pair<const char*, tg::Tensor>> params = {
      {"norm_w", norm_w}, {"w1", w1},     {"b1", b1}, {"w2", w2},
      {"b2", b2},         {"head", head}, {"bh", bh}};
  for (const auto& [name, p] : params) {
    fmt::print("  {:<7} {:<8} grad {}\n", name, tg::dtype_name(p.dtype()),
               tg::dtype_name(p.grad().dtype()));
  }
}
