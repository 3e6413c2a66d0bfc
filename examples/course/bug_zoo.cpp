// file: examples/course/bug_zoo.cpp
// Chapter 19: a walk through the bug zoo (examples/common/bug_zoo.h). Each broken specimen
// meets the check that catches it, and the check that lets it through.
#include <fmt/format.h>

#include "core/core.h"
#include "examples/common/bug_zoo.h"
#include "ops/ops.h"

namespace zoo = tg::examples::zoo;
using zoo::Variant;

namespace {

/// "ok", or how many elements failed and the worst of them, from a gradcheck report.
std::string verdict(const tg::GradcheckResult& r) {
  if (r.ok) return "ok";
  const tg::GradcheckEntry& w = r.worst.front();
  return fmt::format("{} of {} elements fail; worst: input {} {}, analytic {:.4f}, numeric {:.4f}",
                     r.failed, r.checked, w.input, w.where, w.analytic, w.numeric);
}

}  // namespace

int main() {
  tg::Generator gen(19);
  auto leaf = [&](const tg::Shape& s) { return tg::randn(s, tg::kFloat64, gen).requires_grad_(); };

  fmt::print("1. bias_add, db = the first row of dy\n");
  const auto bias = [](const std::vector<tg::Tensor>& in) {
    return zoo::bias_add(in[0], in[1], Variant::kBroken);
  };
  fmt::print("   gradcheck, x (1, 3): {}\n",
             verdict(tg::gradcheck(bias, {leaf({1, 3}), leaf({3})})));
  fmt::print("   gradcheck, x (4, 3): {}\n",
             verdict(tg::gradcheck(bias, {leaf({4, 3}), leaf({3})})));

  fmt::print("2. gather_rows, dtable[id] = g\n");
  const tg::Tensor table = leaf({5, 2});
  for (const tg::Tensor& ids : {tg::tensor({4, 0, 2}, {3}), tg::tensor({4, 0, 4, 2, 4}, {5})}) {
    const auto gather = [ids](const std::vector<tg::Tensor>& in) {
      return zoo::gather_rows(in[0], ids, Variant::kBroken);
    };
    fmt::print("   gradcheck, ids ({}): {}\n", fmt::join(ids.to_vector<int64_t>(), ", "),
               verdict(tg::gradcheck(gather, {table})));
  }

  fmt::print("3. rms_norm_f16, the sum of squares in float16\n");
  for (const double value : {3.0, 300.0}) {
    const tg::Tensor x = tg::full({1, 4}, value, tg::kFloat16);
    const tg::Tensor mine = zoo::rms_norm_f16(x, 1e-5, Variant::kBroken);
    const tg::Tensor reference = tg::rms_norm(x, tg::ones({4}, tg::kFloat16));
    fmt::print("   x = {} everywhere: specimen {}, reference {}\n", value,
               mine.to(tg::kFloat32).to_vector<float>()[0],
               reference.to(tg::kFloat32).to_vector<float>()[0]);
  }

  fmt::print("4. causal_attention, query i also sees key i + 1\n");
  const auto attend = [](const std::vector<tg::Tensor>& in) {
    return zoo::causal_attention(in[0], in[1], in[2], Variant::kBroken);
  };
  fmt::print("   gradcheck: {}\n",
             verdict(tg::gradcheck(attend, {leaf({1, 4, 2}), leaf({1, 4, 2}), leaf({1, 4, 2})})));
  const tg::Tensor q = tg::randn({1, 4, 2}, tg::kFloat64, gen);
  const tg::Tensor k = tg::randn({1, 4, 2}, tg::kFloat64, gen);
  const tg::Tensor v = tg::randn({1, 4, 2}, tg::kFloat64, gen);
  tg::Tensor later = k.clone();
  later.data<double>()[2 * 2] += 1.0;  // key 2 changes
  const tg::Tensor before = zoo::causal_attention(q, k, v, Variant::kBroken);
  const tg::Tensor after = zoo::causal_attention(q, later, v, Variant::kBroken);
  fmt::print("   changing key 2 moves the output of query 1 by {:.3f}\n",
             tg::amax(tg::abs(tg::sub(before.select(1, 1), after.select(1, 1)))).item<double>());
  return 0;
}
