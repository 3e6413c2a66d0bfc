// ops/extreme.cpp — amax, amin, and max/min of everything or along a dim.
// Tests: tests/ops/reduce_test.cpp. Course: docs/course/02-autograd.md (reductions).
//
// A reduction to the largest (smallest) element of each group, planned and folded as in
// ops/reduce.cpp (ops/reduce_plan.h). The backward of an extreme sends the gradient only
// to the elements that won: amax/amin share it evenly among ties, max/min along a dim give
// it all to the returned index.
#include "ops/reduce.h"

#include <cmath>
#include <limits>

#include "ops/compute.h"
#include "ops/elementwise.h"
#include "ops/reduce_plan.h"

namespace tg {
namespace {

using detail::as_keep;
using detail::compute_type;
using detail::ComputeType;
using detail::for_each_offset;
using detail::plan;
using detail::Reduction;

constexpr auto kAsIs = [](auto acc) { return acc; };

void check_nonempty_groups(const Tensor& x, const Reduction& r, const char* op) {
  for (size_t i = 0; i < x.dim(); ++i) {
    TG_CHECK(!r.reduced[i] || x.shape()[i] != 0, IndexError,
             "{}: cannot reduce over dim {} of size 0 (tensor of shape {}): the extreme of no "
             "elements is undefined",
             op, i, x.shape());
  }
}

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

/// dx[o, indices[o, i], i] = dvalues[o, i], and 0 everywhere else (ops/kernels.h's rule:
/// added into dx instead when it is an existing .grad).
template <class T>
void arg_extreme_backward_kernel(const T* dvalues, const int64_t* indices, kernels::GradOut<T> dx,
                                 int64_t outer, int64_t n, int64_t inner) {
  kernels::zero_unless_adding(dx, outer * n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      T& slot = dx[o * n * inner + indices[o * inner + i] * inner + i];
      slot = convert<T>(convert<ComputeType<T>>(slot) +
                        convert<ComputeType<T>>(dvalues[o * inner + i]));
    }
  }
}

// ---------------------------------------------------------------- Functions
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
    const GradBuffer dx = ctx.grad_buffer(0, s.x_shape, dvalues.dtype());
    visit_dtype(dvalues.dtype(), [&]<class T>() {
      if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, bool>) {
        arg_extreme_backward_kernel(dvalues.data<T>(), indices.data<int64_t>(),
                                    kernels::GradOut<T>{dx.tensor.data<T>(), dx.add}, s.outer, s.n,
                                    s.inner);
      }
    });
    return {dx.tensor};
  }
};

template <bool kMax>
ValuesIndices arg_extreme(const Tensor& x, int64_t dim, bool keepdim, Here here) {
  std::vector<Tensor> out = ArgExtreme<kMax>::apply_at(here, x, dim, keepdim);
  return {out[0], out[1]};
}

}  // namespace

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
