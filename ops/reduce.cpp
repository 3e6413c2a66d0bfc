// ops/reduce.cpp — sum, mean, amax/amin, max/min.
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

namespace tg {
namespace {

using detail::ComputeType;
using detail::for_each_offset;

// ---------------------------------------------------------------- planning
/// Which dims a reduction removes, and the shapes around it.
struct Reduction {
  DimVec reduced;   // one flag per dim of x: 1 if reduced
  Shape keep;       // x's shape with the reduced dims set to 1
  Shape out;        // the result's shape
  int64_t count{};  // elements combined into each result
};

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

void check_nonempty_groups(const Tensor& x, const Reduction& r, const char* op) {
  for (size_t i = 0; i < x.dim(); ++i) {
    TG_CHECK(!r.reduced[i] || x.shape()[i] != 0, IndexError,
             "{}: cannot reduce over dim {} of size 0 (tensor of shape {}): the extreme of no "
             "elements is undefined",
             op, i, x.shape());
  }
}

using detail::compute_type;

// ---------------------------------------------------------------- raw kernels
/// acc[group(i)] = combine(acc[group(i)], x[i]) for every element i of x, in row-major
/// order. `acc` has shape `keep` and the compute type C.
template <class T, class C, class Combine>
void reduce_kernel(const Tensor& x, const Tensor& acc, Combine combine) {
  const Tensor target = acc.expand(x.shape());
  const T* px = x.data<T>();
  C* pa = target.data<C>();
  for_each_offset<2>(x.shape(), {&target.strides(), &x.strides()},
                     [&](const auto& o) { pa[o[0]] = combine(pa[o[0]], convert<C>(px[o[1]])); });
}

/// The reduction of x described by r: start every group at `init`, fold the elements in
/// with combine, then apply finish to each group. Returns shape `keep`, x's dtype.
template <class Combine, class Finish>
Tensor reduce(const Tensor& x, const Reduction& r, double init, Combine combine, Finish finish) {
  const DType ct = compute_type(x.dtype());
  Tensor acc = full(r.keep, init, ct);
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
      using C = ComputeType<T>;
      reduce_kernel<T, C>(x, acc, combine);
      C* pa = acc.data<C>();
      for (int64_t i = 0; i < acc.numel(); ++i) pa[i] = finish(pa[i]);
    }
  });
  return detail::round_to(acc, x.dtype());
}

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

/// n when x's groups (reduced where `keep` is 1) are its last dims and x is float32/float64:
/// x is then (rows, n), every group a contiguous run; 0 otherwise.
int64_t run_length(const Tensor& x, const Shape& keep) {
  if (x.dtype() != kFloat32 && x.dtype() != kFloat64) return 0;
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
/// order of a sum must not depend on x's layout.
template <class Finish>
Tensor sum_runs(const Tensor& x, const Shape& keep, int64_t n, Finish finish) {
  const Tensor xc = x.contiguous();
  Tensor out = empty(keep, x.dtype());
  detail::visit_compute(x.dtype(), [&]<class F>() {
    F* po = out.data<F>();
    const int64_t rows = out.numel();
    kernels::sum_rows.get<F>()(xc.data<F>(), po, rows, n);
    for (int64_t r = 0; r < rows; ++r) po[r] = finish(po[r]);
  });
  return out;
}

/// The fold and finish steps of sum: add each element; use the total as it is.
constexpr auto kPlus = [](auto acc, auto v) { return acc + v; };
constexpr auto kAsIs = [](auto acc) { return acc; };

/// NaN beats everything, so a group that holds a NaN reduces to NaN (as in PyTorch).
template <bool kMax>
struct Better {
  template <class C>
  bool operator()(C v, C best) const {
    if (std::isnan(v)) return !std::isnan(best);
    return kMax ? v > best : v < best;
  }
};

/// Whether v counts as "the" extreme `best` for the gradient: equal, or both NaN.
template <class C>
bool is_tie(C v, C best) {
  return v == best || (std::isnan(v) && std::isnan(best));
}

/// dx = dout * [x == out] / (ties in the group), with out and dout of shape `keep`.
Tensor extreme_backward(const Tensor& x, const Tensor& out, const Tensor& dout) {
  const Tensor e_out = out.expand(x.shape()), e_dout = dout.expand(x.shape());
  Tensor ties = zeros(out.shape(), compute_type(x.dtype()));
  const Tensor e_ties = ties.expand(x.shape());
  Tensor dx = empty(x.shape(), x.dtype());
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
      using C = ComputeType<T>;
      const T *px = x.data<T>(), *po = e_out.data<T>(), *pg = e_dout.data<T>();
      C* pt = e_ties.data<C>();
      T* pd = dx.data<T>();
      // x may be a strided view; dx is contiguous, so it walks with strides of its own.
      const std::array<const Strides*, 5> strides{&x.strides(), &e_out.strides(), &e_ties.strides(),
                                                  &e_dout.strides(), &dx.strides()};
      // Pass 1: count the ties in each group. Pass 2: share the group's gradient among them.
      for_each_offset<5>(x.shape(), strides, [&](const auto& o) {
        if (is_tie(convert<C>(px[o[0]]), convert<C>(po[o[1]]))) pt[o[2]] += 1;
      });
      for_each_offset<5>(x.shape(), strides, [&](const auto& o) {
        const bool tie = is_tie(convert<C>(px[o[0]]), convert<C>(po[o[1]]));
        pd[o[4]] = convert<T>(tie ? convert<C>(pg[o[3]]) / pt[o[2]] : C(0));
      });
    }
  });
  return dx;
}

/// For each of the outer * inner lines of length n in a contiguous x viewed as
/// (outer, n, inner): the best value and the index of its FIRST occurrence.
template <class T, class IsBetter>
void arg_extreme_kernel(const T* x, T* values, int64_t* indices, int64_t outer, int64_t n,
                        int64_t inner, IsBetter better) {
  using C = ComputeType<T>;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* line = x + o * n * inner + i;  // element k of the line is line[k * inner]
      int64_t best_k = 0;
      for (int64_t k = 1; k < n; ++k) {
        // Strictly better only: an equal value later in the line does not replace the first.
        if (better(convert<C>(line[k * inner]), convert<C>(line[best_k * inner]))) best_k = k;
      }
      values[o * inner + i] = line[best_k * inner];
      indices[o * inner + i] = best_k;
    }
  }
}

/// dx[o, indices[o, i], i] += dvalues[o, i]; everything else in dx stays as it was.
template <class T>
void arg_extreme_backward_kernel(const T* dvalues, const int64_t* indices, T* dx, int64_t outer,
                                 int64_t n, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      T& slot = dx[o * n * inner + indices[o * inner + i] * inner + i];
      slot = convert<T>(convert<ComputeType<T>>(slot) +
                        convert<ComputeType<T>>(dvalues[o * inner + i]));
    }
  }
}

// ---------------------------------------------------------------- Functions
/// Backward of every reduction: the upstream gradient of shape `out`, viewed as `keep`.
Tensor as_keep(const Tensor& dout, const Shape& keep) { return dout.reshape(keep); }

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
template <bool kMax, bool kAllDims>
struct Extreme : Function<Extreme<kMax, kAllDims>> {
  static constexpr std::string_view kName =
      kAllDims ? (kMax ? "max" : "min") : (kMax ? "amax" : "amin");
  struct State {
    Shape keep;
  };
  // forward: out[g] = max over the elements i of group g of x[i]
  static Tensor forward(Context<State>& ctx, const Tensor& x, const DimVec& dims, bool keepdim) {
    const char* op = kName.data();
    detail::check_floating(x, op);
    const Reduction r = plan(x, dims, keepdim, op);
    check_nonempty_groups(x, r, op);
    const double init =
        kMax ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    const auto keep_better = [](auto a, auto v) { return Better<kMax>{}(v, a) ? v : a; };
    const Tensor out = reduce(x, r, init, keep_better, kAsIs);
    ctx.state = {r.keep};
    ctx.save_for_backward(x, out);
    return out.view(r.out);
  }
  // backward: out[g] depends only on the elements equal to it (the ties); moving all t of
  //           them up by h moves out[g] by h, so each gets an equal share:
  //           dx[i] = dout[g] / t if x[i] == out[g], else 0 (PyTorch's choice at the kink)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const auto saved = ctx.saved_tensors();
    return {extreme_backward(saved[0], saved[1], as_keep(g[0], ctx.state.keep))};
  }
};

/// max(x, dim) and min(x, dim): the values and the (first) index of each along `dim`.
template <bool kMax>
struct ArgExtreme : Function<ArgExtreme<kMax>> {
  static constexpr std::string_view kName = kMax ? "max" : "min";
  struct State {
    Shape x_shape;
    int64_t outer{}, n{}, inner{};
  };
  // forward: values[o, i] = x[o, indices[o, i], i], with x viewed as (outer, n, inner)
  static std::vector<Tensor> forward(Context<State>& ctx, const Tensor& x, int64_t dim,
                                     bool keepdim) {
    const char* op = kName.data();
    detail::check_floating(x, op);
    const Reduction r = plan(x, {dim}, keepdim, op);
    check_nonempty_groups(x, r, op);
    const size_t d = wrap_dim(dim, x.dim(), op);
    State s{x.shape(), 1, 1, 1};
    for (size_t i = 0; i < x.dim(); ++i) {
      int64_t& part = i < d ? s.outer : i == d ? s.n : s.inner;
      part *= x.shape()[i];
    }
    const Tensor xc = x.contiguous();
    Tensor values = empty(r.out, x.dtype()), indices = empty(r.out, kInt64);
    visit_dtype(x.dtype(), [&]<class T>() {
      if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
        arg_extreme_kernel(xc.data<T>(), values.data<T>(), indices.data<int64_t>(), s.outer, s.n,
                           s.inner, Better<kMax>{});
      }
    });
    ctx.state = s;
    ctx.save_for_backward(indices);
    return {values, indices};
  }
  // backward: values[o, i] is a copy of x[o, indices[o, i], i], so that element alone gets
  //           the gradient: dx[o, k, i] = dvalues[o, i] if k == indices[o, i], else 0.
  //           (Even on ties: only the returned index moves the value, as in PyTorch.)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const Tensor indices = ctx.saved_tensors()[0];
    const Tensor dvalues = g[0].contiguous();
    const State& s = ctx.state;
    Tensor dx = zeros(s.x_shape, dvalues.dtype());
    visit_dtype(dx.dtype(), [&]<class T>() {
      if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
        arg_extreme_backward_kernel(dvalues.data<T>(), indices.data<int64_t>(), dx.data<T>(),
                                    s.outer, s.n, s.inner);
      }
    });
    return {dx};
  }
};

template <bool kMax>
ValuesIndices arg_extreme(const Tensor& x, int64_t dim, bool keepdim, Here here) {
  std::vector<Tensor> out = ArgExtreme<kMax>::apply_at(here, x, dim, keepdim);
  return {out[0], out[1]};
}

}  // namespace

constinit kernels::KernelPair<kernels::SumRows, float, double> kernels::sum_rows{
    tg::sum_rows<float>, tg::sum_rows<double>};

Tensor sum(const Tensor& x, const DimVec& dims, bool keepdim, Here here) {
  return Sum::apply_at(here, x, dims, keepdim);
}
Tensor mean(const Tensor& x, const DimVec& dims, bool keepdim, Here here) {
  return Mean::apply_at(here, x, dims, keepdim);
}
Tensor amax(const Tensor& x, const DimVec& dims, bool keepdim, Here here) {
  return Extreme<true, false>::apply_at(here, x, dims, keepdim);
}
Tensor amin(const Tensor& x, const DimVec& dims, bool keepdim, Here here) {
  return Extreme<false, false>::apply_at(here, x, dims, keepdim);
}
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim, Here here) {
  return arg_extreme<true>(x, dim, keepdim, here);
}
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim, Here here) {
  return arg_extreme<false>(x, dim, keepdim, here);
}
Tensor max(const Tensor& x, Here here) {
  return Extreme<true, true>::apply_at(here, x, DimVec{}, false);
}
Tensor min(const Tensor& x, Here here) {
  return Extreme<false, true>::apply_at(here, x, DimVec{}, false);
}

}  // namespace tg
