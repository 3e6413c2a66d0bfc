// tests/ops/op_table_test.cpp — one table of differentiable ops drives the generic checks.
//
// For every op and every set of input shapes in the table (at least three, including
// size-1 dims and broadcasting where the op broadcasts):
//   * gradcheck in float64 with contiguous inputs;
//   * gradcheck again with every input non-contiguous (same values, permuted storage);
//   * the float32 forward agrees with the float64 forward.
// Each op's own test file pins its literal values, kinks and error paths.
#include <cmath>

#include "test_util.h"

namespace {

using tg::Shape;
using tg::Tensor;
using Inputs = std::vector<Tensor>;

// Input values the op is smooth at: |x| in [0.3, 1.3], random sign; positive only for ops
// defined on x > 0. Distinct magnitudes keep max/min away from ties.
enum class Domain { kAny, kPositive };

struct OpCase {
  std::string name;
  std::function<Tensor(const Inputs&)> fn;
  std::vector<std::vector<Shape>> shape_sets;
  Domain domain = Domain::kAny;
};

std::ostream& operator<<(std::ostream& os, const OpCase& c) { return os << c.name; }

Tensor make_input(const Shape& shape, Domain domain, tg::Generator& gen) {
  const Tensor u = tg::rand(shape, tg::kFloat64, gen);
  const Tensor sign = tg::rand(shape, tg::kFloat64, gen);
  Tensor x = tg::empty(shape, tg::kFloat64);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double m = 0.3 + u.data<double>()[i];
    x.data<double>()[i] = domain == Domain::kPositive || sign.data<double>()[i] < 0.5 ? m : -m;
  }
  return x;
}

// The same values in a non-contiguous layout: stored with the dims reversed and viewed
// back (a transposed layout); where size-1 dims make that contiguous again, every other
// element of a buffer twice as long (a strided layout).
Tensor non_contiguous(const Tensor& x) {
  tg::DimVec perm;
  for (size_t d = x.dim(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  Tensor permuted = x.permute(perm).contiguous().permute(perm);
  if (!permuted.is_contiguous()) return permuted;
  Tensor wide = tg::zeros({2 * x.numel()}, x.dtype());
  Tensor strided = wide.slice(0, 0, 2 * x.numel(), 2).view(x.shape());
  strided.copy_(x);
  return strided;
}

std::vector<OpCase> table() {
  const std::vector<Shape> broadcast_pairs[] = {{{2, 3}, {2, 3}}, {{4, 1}, {3}}, {{1}, {2, 1, 5}}};
  std::vector<OpCase> t;
  auto binary = [&](std::string name, std::function<Tensor(const Inputs&)> fn) {
    t.push_back({std::move(name),
                 std::move(fn),
                 {broadcast_pairs[0], broadcast_pairs[1], broadcast_pairs[2]}});
  };
  binary("add", [](const Inputs& in) { return tg::add(in[0], in[1]); });
  binary("mul", [](const Inputs& in) { return tg::mul(in[0], in[1]); });

  binary("sub", [](const Inputs& in) { return tg::sub(in[0], in[1]); });
  binary("div", [](const Inputs& in) { return tg::div(in[0], in[1]); });
  binary("operators", [](const Inputs& in) { return (in[0] - in[1]) * in[0] / (in[1] + 3.0); });

  // Unary ops and scalar forms, on a vector, a column and a 3-D tensor.
  const std::vector<std::vector<Shape>> unary_shapes = {{{5}}, {{4, 1}}, {{2, 3, 2}}};
  auto unary = [&](std::string name, std::function<Tensor(const Tensor&)> f,
                   Domain domain = Domain::kAny) {
    t.push_back(
        {std::move(name), [f](const Inputs& in) { return f(in[0]); }, unary_shapes, domain});
  };
  unary("neg", [](const Tensor& x) { return tg::neg(x); });
  unary("scalar_forms", [](const Tensor& x) { return 2.0 - (x * 3.0 + 1.0) / 2.0; });
  unary("rdiv_scalar", [](const Tensor& x) { return 1.5 / x; });
  unary(
      "pow", [](const Tensor& x) { return tg::pow(x, 2.5); }, Domain::kPositive);
  unary("exp", [](const Tensor& x) { return tg::exp(x); });
  unary(
      "log", [](const Tensor& x) { return tg::log(x); }, Domain::kPositive);
  unary(
      "sqrt", [](const Tensor& x) { return tg::sqrt(x); }, Domain::kPositive);
  unary(
      "rsqrt", [](const Tensor& x) { return tg::rsqrt(x); }, Domain::kPositive);
  unary("abs", [](const Tensor& x) { return tg::abs(x); });
  // Bounds at 0.0 and 1.0 sit in gaps of the inputs' magnitudes [0.3, 1.3] only partly:
  // use bounds that no input comes within 0.05 of.
  unary("clamp", [](const Tensor& x) { return tg::clamp(x, -0.25, 2.0); });

  // Views and copies (Tensor methods, recorded from core/view.cpp and core/copy.cpp).
  const std::vector<std::vector<Shape>> view_shapes = {{{2, 3}}, {{4, 1}}, {{2, 3, 2}}};
  unary("view_add_dim", [](const Tensor& x) {
    tg::Shape s = x.shape();
    s.insert(1, 1);
    return x.view(s);
  });
  t.push_back({"reshape", [](const Inputs& in) { return in[0].reshape({-1}); }, view_shapes});
  t.push_back({"flatten_unflatten",
               [](const Inputs& in) {
                 return in[0].flatten().unflatten(0, {-1, 2});
               },
               view_shapes});
  t.push_back({"permute_transpose",
               [](const Inputs& in) {
                 tg::DimVec perm;
                 for (size_t d = in[0].dim(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
                 return in[0].permute(perm).transpose(0, -1).t();
               },
               {{{2, 3}}, {{4, 1}}, {{3, 2}}}});
  t.push_back({"squeeze_unsqueeze",
               [](const Inputs& in) { return in[0].unsqueeze(0).squeeze().unsqueeze(-1); },
               view_shapes});
  t.push_back({"expand",
               [](const Inputs& in) {
                 tg::Shape s = in[0].unsqueeze(0).shape();
                 s[0] = 3;
                 return in[0].expand(s);
               },
               view_shapes});
  t.push_back(
      {"narrow_slice_select",
       [](const Inputs& in) { return in[0].narrow(0, 1, 1).slice(1, 0, 3, 2).select(0, 0); },
       {{{2, 3}}, {{3, 4}}, {{2, 3, 2}}}});
  t.push_back({"index_operator", [](const Inputs& in) { return in[0][1]; }, view_shapes});
  t.push_back({"contiguous_clone",
               [](const Inputs& in) { return in[0].t().contiguous().clone(); },
               {{{2, 3}}, {{4, 1}}, {{3, 3}}}});
  // (A float32 round trip cannot be finite-differenced at eps 1e-6; view_grad_test checks
  // that to() casts gradients back.)
  t.push_back(
      {"to_same_dtype", [](const Inputs& in) { return in[0].to(in[0].dtype()); }, view_shapes});

  // Joining and splitting.
  t.push_back({"cat",
               [](const Inputs& in) {
                 return tg::cat({in[0], in[1]}, -1);
               },
               {{{3}, {2}}, {{2, 1}, {2, 3}}, {{2, 2, 1}, {2, 2, 2}}}});
  t.push_back({"stack",
               [](const Inputs& in) {
                 return tg::stack({in[0], in[1]}, 1);
               },
               {{{3}, {3}}, {{2, 1}, {2, 1}}, {{1, 3, 2}, {1, 3, 2}}}});
  t.push_back({"split_and_reorder",
               [](const Inputs& in) {
                 auto p = tg::split(in[0], 2, -1);
                 std::reverse(p.begin(), p.end());
                 return tg::cat(p, -1);
               },
               {{{5}}, {{3, 4}}, {{2, 1, 3}}}});
  t.push_back({"chunk_first",
               [](const Inputs& in) { return tg::chunk(in[0], 2, 0)[0]; },
               {{{4}}, {{3, 2}}, {{2, 1, 3}}}});

  // Indexing, with fixed indices and masks (repeated ids on purpose).
  t.push_back({"index_select",
               [](const Inputs& in) {
                 return tg::index_select(in[0], 0, tg::tensor({1, 0, 1}, {3}));
               },
               {{{2}}, {{2, 3}}, {{2, 1, 4}}}});
  t.push_back({"gather",
               [](const Inputs& in) {
                 return tg::gather(in[0], -1, tg::tensor({0, 0, 1, 1, 0, 1}, {3, 2}));
               },
               {{{3, 2}}, {{3, 4}}, {{3, 3}}}});
  t.push_back({"where",
               [](const Inputs& in) {
                 return tg::where(tg::tensor({true, false, true}, {3}), in[0], in[1]);
               },
               {{{3}, {3}}, {{2, 3}, {1}}, {{4, 1}, {2, 1, 3}}}});
  t.push_back({"masked_fill",
               [](const Inputs& in) {
                 return tg::masked_fill(in[0], tg::tensor({false, true}, {2, 1}), 0.5);
               },
               {{{2, 1}}, {{2, 3}}, {{4, 2, 3}}}});

  // Reductions: over all dims, over one dim, over two dims with keepdim.
  const std::vector<std::vector<Shape>> reduce_shapes = {{{5}}, {{3, 1, 4}}, {{2, 3, 4}}};
  t.push_back({"sum", [](const Inputs& in) { return tg::sum(in[0]); }, reduce_shapes});
  t.push_back({"sum_dim", [](const Inputs& in) { return tg::sum(in[0], {-1}); }, reduce_shapes});
  t.push_back({"mean_keepdim",
               [](const Inputs& in) {
                 const tg::DimVec dims = in[0].dim() > 1 ? tg::DimVec{0, -1} : tg::DimVec{0};
                 return tg::mean(in[0], dims, true);
               },
               reduce_shapes});
  t.push_back({"amax", [](const Inputs& in) { return tg::amax(in[0], {-1}); }, reduce_shapes});
  t.push_back({"amin", [](const Inputs& in) { return tg::amin(in[0], {0}); }, reduce_shapes});
  t.push_back(
      {"max_dim", [](const Inputs& in) { return tg::max(in[0], -1).values; }, reduce_shapes});
  t.push_back({"min_all", [](const Inputs& in) { return tg::min(in[0]); }, reduce_shapes});

  // matmul: dot, matrix-vector, matrix, batch-broadcast.
  t.push_back({"matmul",
               [](const Inputs& in) { return tg::matmul(in[0], in[1]); },
               {{{4}, {4}}, {{3, 4}, {4}}, {{1, 4}, {4, 3}}, {{2, 1, 3, 4}, {5, 4, 2}}}});
  return t;
}

class OpTableTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpTableTest, GradcheckOnEveryShapeSet) {
  const OpCase& c = GetParam();
  tg::Generator gen(1);
  for (const auto& shapes : c.shape_sets) {
    Inputs in;
    for (const Shape& s : shapes) in.push_back(make_input(s, c.domain, gen).requires_grad_());
    EXPECT_GRADCHECK(c.fn, in) << c.name << " with input shapes "
                               << fmt::format("{}", fmt::join(shapes, ", "));
  }
}

TEST_P(OpTableTest, GradcheckWithNonContiguousInputs) {
  const OpCase& c = GetParam();
  tg::Generator gen(2);
  for (const auto& shapes : c.shape_sets) {
    Inputs in, in_contiguous;
    for (const Shape& s : shapes) {
      in_contiguous.push_back(make_input(s, c.domain, gen));
      Tensor x = non_contiguous(in_contiguous.back());
      if (x.numel() > 1) {
        ASSERT_FALSE(x.is_contiguous()) << fmt::format("{}", s);
      }
      in.push_back(x.requires_grad_());
    }
    // Same values in, same values out, whatever the layout.
    EXPECT_EQ(c.fn(in).to(tg::kFloat64).to_vector<double>(),
              c.fn(in_contiguous).to(tg::kFloat64).to_vector<double>())
        << c.name;
    EXPECT_GRADCHECK(c.fn, in) << c.name << " with input shapes "
                               << fmt::format("{}", fmt::join(shapes, ", "));
  }
}

TEST_P(OpTableTest, Float32ForwardAgreesWithFloat64) {
  const OpCase& c = GetParam();
  tg::Generator gen(3);
  for (const auto& shapes : c.shape_sets) {
    Inputs in64, in32;
    for (const Shape& s : shapes) {
      in64.push_back(make_input(s, c.domain, gen));
      in32.push_back(in64.back().to(tg::kFloat32));
    }
    const Tensor y64 = c.fn(in64), y32 = c.fn(in32);
    ASSERT_EQ(y32.dtype(), tg::kFloat32) << c.name;
    ASSERT_EQ(y32.shape(), y64.shape()) << c.name;
    const auto a = y64.to(tg::kFloat64).to_vector<double>();
    const auto b = y32.to(tg::kFloat64).to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(a[i]))) << c.name << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpTableTest, ::testing::ValuesIn(table()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
