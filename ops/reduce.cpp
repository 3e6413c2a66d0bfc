// ops/reduce.cpp — sum and mean (amax, amin, max and min: ops/extreme.cpp).
// Tests: tests/ops/reduce_test.cpp. Course: docs/course/02-autograd.md (sum's backward).
//
// Shape legend: x has shape (d0, ..., dk); `keep` is x's shape with every reduced dim set to
// 1 (the keepdim=true result); `out` is the result (keep without those dims unless keepdim).
//
// The one trick used by every kernel here: view the result of shape `keep` as x's shape
// with expand(). Its reduced dims get stride 0, so walking x in row-major order and writing
// "result at the same index" sends every element of a group to the same slot:
//
//   x (2, 3):  [[1, 2, 3],      acc (2, 1) expanded to (2, 3) with strides (1, 0):
//               [4, 5, 6]]      x[0, j] -> acc[0] for every j,  x[1, j] -> acc[1]
//
// The same view run backwards spreads a gradient of shape `keep` over x's shape.
//
// When x is float32 or float64 and the reduced dims are the LAST ones (a full reduction
// included), every group of sum and mean is one contiguous run of n elements: x is (rows, n),
// and the kernel pair kernels::sum_rows sums the runs (its fast version, in
// ops/fast/reduce.cpp, in vector lanes and on threads).
#include "ops/reduce.h"

#include <cmath>
#include <limits>

#include "ops/compute.h"
#include "ops/elementwise.h"
#include "ops/reduce_plan.h"

namespace tg {

namespace detail {

Reduction plan(const Tensor& x, const DimVec& dims, bool keepdim, const char* op) {
  const size_t rank = x.dim();
  Reduction r;
  // max(rank, 1) flags: a 0-d tensor accepts dim 0 (or -1) though it has no dims.
  r.reduced = DimVec(std::max<size_t>(rank, 1), dims.empty() ? 1 : 0);
  for (int64_t d : dims) {
    const size_t i = wrap_dim(d, rank, op);
    TG_CHECK(!r.reduced[i], ShapeError,
             "{}: dim {} appears more than once in dims {} (tensor of shape {})", op, i, dims,
             x.shape());
    r.reduced[i] = 1;
  }
  r.count = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t size = x.shape()[i];
    if (r.reduced[i]) r.count *= size;
    r.keep.push_back(r.reduced[i] ? 1 : size);
    if (keepdim || !r.reduced[i]) r.out.push_back(r.reduced[i] ? 1 : size);
  }
  return r;
}

}  // namespace detail

namespace {

using detail::as_keep;
using detail::compute_type;
using detail::plan;
using detail::Reduction;

// ---------------------------------------------------------------- sum of contiguous runs
/// out[r] = the sum of run r, left to right.
template <class F>
void sum_rows(const F* x, F* out, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    F acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += x[r * n + i];
    out[r] = acc;
  }
}

/// n when x's groups (reduced where `keep` is 1) are its last dims and x is floating: x is
/// then (rows, n), every group a contiguous run; 0 otherwise.
int64_t run_length(const Tensor& x, const Shape& keep) {
  if (!is_floating_point(x.dtype())) return 0;
  size_t p = x.dim();  // the first of the trailing dims that keep has as 1
  while (p > 0 && keep[p - 1] == 1) --p;
  int64_t n = 1;
  for (size_t i = 0; i < x.dim(); ++i) {
    if (i < p && keep[i] != x.shape()[i]) return 0;  // a reduced dim before a kept one
    if (i >= p) n *= x.shape()[i];
  }
  return n;
}

/// finish(sum of each run) of x (rows of n), shape `keep`. A strided x is copied first: the
/// order of a sum must not depend on x's layout. float16/bfloat16 are widened to float32 on
/// the way in and the result rounded once (ops/compute.h).
template <class Finish>
Tensor sum_runs(const Tensor& x, const Shape& keep, int64_t n, Finish finish) {
  const DType ct = compute_type(x.dtype());
  const Tensor xc = detail::as_compute(x, ct);
  Tensor out = empty(keep, ct);
  detail::visit_compute(ct, [&]<class F>() {
    F* po = out.data<F>();
    const int64_t rows = out.numel();
    kernels::sum_rows.get<F>()(xc.data<F>(), po, rows, n);
    for (int64_t r = 0; r < rows; ++r) po[r] = finish(po[r]);
  });
  return detail::round_to(out, x.dtype());
}

/// The fold and finish steps of sum: add each element; use the total as it is.
constexpr auto kPlus = [](auto acc, auto v) { return acc + v; };
constexpr auto kAsIs = [](auto acc) { return acc; };

// ---------------------------------------------------------------- Functions
struct Sum : Function<Sum> {
  static constexpr std::string_view kName = "sum";
  struct State {
    Shape x_shape, keep;
  };
  // forward: out[g] = sum over the elements i of group g of x[i]
  static Tensor forward(Context<State>& ctx, const Tensor& x, const DimVec& dims, bool keepdim) {
    detail::check_floating(x, "sum");
    const Reduction r = plan(x, dims, keepdim, "sum");
    ctx.state = {x.shape(), r.keep};
    if (const int64_t n = run_length(x, r.keep); n > 0) {
      return sum_runs(x, r.keep, n, kAsIs).view(r.out);
    }
    return reduce(x, r, 0.0, kPlus, kAsIs).view(r.out);
  }
  // backward: d(out[g])/d(x[i]) = 1 for every i in group g, so dx[i] = dout[g]
  // That is dout broadcast over each group: an expanded view of it, no copy (as in PyTorch).
  // The op that receives it reads it in place, or copies it out only if it must; a leaf's
  // .grad gets its own memory (core/autograd.cpp). Nothing may write into it.
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    return {as_keep(g[0], ctx.state.keep).expand(ctx.state.x_shape)};
  }
};

struct Mean : Function<Mean> {
  static constexpr std::string_view kName = "mean";
  struct State {
    Shape x_shape, keep;
    int64_t count{};
  };
  // forward: out[g] = (sum over the elements i of group g of x[i]) / count
  static Tensor forward(Context<State>& ctx, const Tensor& x, const DimVec& dims, bool keepdim) {
    detail::check_floating(x, "mean");
    const Reduction r = plan(x, dims, keepdim, "mean");
    ctx.state = {x.shape(), r.keep, r.count};
    // With count == 0 this is 0 / 0 = NaN, as in PyTorch.
    const auto divide = [n = r.count](auto a) { return a / static_cast<decltype(a)>(n); };
    if (const int64_t n = run_length(x, r.keep); n > 0) {
      return sum_runs(x, r.keep, n, divide).view(r.out);
    }
    return reduce(x, r, 0.0, kPlus, divide).view(r.out);
  }
  // backward: d(out[g])/d(x[i]) = 1 / count for every i in group g, so dx[i] = dout[g] / count
  // As for sum, an expanded view of dout / count: one division per group, not per element.
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const auto divide = [n = ctx.state.count](auto v) { return v / static_cast<decltype(v)>(n); };
    const Tensor share = detail::unary_map(as_keep(g[0], ctx.state.keep), divide);
    return {share.expand(ctx.state.x_shape)};
  }
};

/// amax, amin, and max(x)/min(x) (which are amax/amin over every dim, recorded under their
/// own name): one Function per (name, direction).
}  // namespace

constinit kernels::KernelPair<kernels::SumRows, float, double> kernels::sum_rows{
    tg::sum_rows<float>, tg::sum_rows<double>};

Tensor sum(const Tensor& x, const DimVec& dims, bool keepdim, Here here) {
  return Sum::apply_at(here, x, dims, keepdim);
}
Tensor mean(const Tensor& x, const DimVec& dims, bool keepdim, Here here) {
  return Mean::apply_at(here, x, dims, keepdim);
}

}  // namespace tg
