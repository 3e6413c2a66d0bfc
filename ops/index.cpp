// ops/index.cpp — index_select, gather, where, masked_fill.
// Tests: tests/ops/index_test.cpp.
// Course: docs/course/08-embedding.md (index_select, the composed embedding).
//
// Indexing reads: out[p] = x[place(p)]. Its backward writes the other way round: every
// dout[p] is added into dx[place(p)]. When an id repeats, several outputs read the same
// element of x, so that element's gradient is the SUM of theirs: the backward starts from
// dx = 0 and scatter-ADDs (never assigns), accumulating in float (double for float64).
//
// Choosing routes each gradient element back to the one input it was taken from:
//   out = cond ? a : b   =>   da = sum_to(cond ? dout : 0), db = sum_to(cond ? 0 : dout)
// (sum_to undoes the broadcasting, core/broadcast.h). The input not chosen gets 0 even
// where a == b, as in PyTorch; masked_fill is where(mask, value, x) with a constant value.
#include "ops/index.h"

#include <cstring>
#include <string>

#include "ops/elementwise.h"

namespace tg {
namespace {

// A 0-d x behaves as one element along its only "dim" (PyTorch allows dim 0 and -1).
int64_t size_at(const Shape& s, size_t d) { return s.empty() ? 1 : s[d]; }
int64_t stride_at(const Strides& s, size_t d) { return s.empty() ? 0 : s[d]; }
// Strides that walk `t` with `dim` pinned at 0 (the id supplies that coordinate).
Strides pinned_strides(const Strides& strides, size_t dim) {
  Strides out = strides;
  if (!out.empty()) out[dim] = 0;
  return out;
}

// ---------------------------------------------------------------- checks
void check_index_dtype(const Tensor& index, const char* op) {
  TG_CHECK(index.dtype() == kInt64, DTypeError,
           "{}: index must have dtype int64, got {} (shape {}); convert with .to(tg::kInt64)", op,
           index.dtype(), index.shape());
}

// "2" for a 1-D index, "(1, 0)" for more dims: where element number `flat` sits.
std::string position(const Shape& shape, int64_t flat) {
  if (shape.size() <= 1) return fmt::format("{}", flat);
  DimVec idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("{}", idx);
}

// Every id in `index` lies in [0, n), or IndexError naming the id, its position and n. Run
// before any kernel, so that no bad id is ever used as an address.
void check_ids(const Tensor& index, int64_t n, size_t dim, const char* op) {
  const int64_t* ids = index.data<int64_t>();
  int64_t flat = 0;
  detail::for_each_offset<1>(index.shape(), {&index.strides()}, [&](const auto& off) {
    const int64_t id = ids[off[0]];
    TG_CHECK(id >= 0 && id < n, IndexError,
             "{}: index {} at position {} is out of range for dim {} of size {} (ids must be in "
             "[0, {}))",
             op, id, position(index.shape(), flat), dim, n, n);
    ++flat;
  });
}

void check_bool(const Tensor& t, const char* op, const char* what) {
  TG_CHECK(t.dtype() == kBool, DTypeError, "{}: {} must have dtype bool, got {} (shape {})", op,
           what, t.dtype(), t.shape());
}

// ---------------------------------------------------------------- kernels
// index_select sees x as (outer, n, inner) around dim, and out as (outer, m, inner).
struct Slabs {
  int64_t outer, n, inner;
};
Slabs slabs(const Shape& s, size_t dim) {
  Slabs r{1, size_at(s, dim), 1};
  for (size_t i = 0; i < s.size(); ++i) {
    if (i < dim) r.outer *= s[i];
    if (i > dim) r.inner *= s[i];
  }
  return r;
}

// out[o, k, :] = x[o, ids[k], :]: one block of `inner` elements of `bytes` each per (o, k),
// for any dtype. x and out contiguous.
void index_select_forward(const char* x, const int64_t* ids, int64_t m, char* out, Slabs s,
                          size_t bytes) {
  const size_t block = s.inner * bytes;
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t k = 0; k < m; ++k) {
      std::memcpy(out + (o * m + k) * block, x + (o * s.n + ids[k]) * block, block);
    }
  }
}

// dx[o, ids[k], :] += dout[o, k, :], so a repeated id gets the sum over its copies.
template <class A, class G>
void index_select_backward(const G* dout, const int64_t* ids, int64_t m, A* dx, Slabs s) {
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t k = 0; k < m; ++k) {
      A* row = dx + (o * s.n + ids[k]) * s.inner;
      const G* grow = dout + (o * m + k) * s.inner;
      for (int64_t i = 0; i < s.inner; ++i) row[i] += convert<A>(grow[i]);
    }
  }
}

// A zero gradient of `shape` in the accumulation type of `dout` (double for float64, float
// otherwise: summing many terms in float16 would round at every step), filled by
// add(const G* dout, A* dx), then returned in dout's dtype.
template <class Add>
Tensor scatter_add_grad(const Tensor& dout, const Shape& shape, Add add) {
  const DType acc = dout.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor dx = zeros(shape, acc);
  visit_dtype(dout.dtype(), [&]<class G>() {
    if constexpr (!std::is_same_v<G, int64_t> && !std::is_same_v<G, bool>) {
      add(dout.data<G>(), dx.data<detail::ComputeType<G>>());
    }
  });
  return acc == dout.dtype() ? dx : dx.to(dout.dtype());
}

// dout where mask == keep, 0 elsewhere (mask broadcasts to dout's shape).
Tensor keep_where(const Tensor& dout, const Tensor& mask, bool keep) {
  const Tensor m = mask.expand(dout.shape());
  Tensor out = empty(dout.shape(), dout.dtype());
  visit_dtype(dout.dtype(), [&]<class T>() {
    const T* g = dout.data<T>();
    const bool* pm = m.data<bool>();
    T* o = out.data<T>();
    const T zero = convert<T>(0.0);
    detail::for_each_offset<3>(
        dout.shape(), {&out.strides(), &m.strides(), &dout.strides()},
        [&](const auto& off) { o[off[0]] = pm[off[1]] == keep ? g[off[2]] : zero; });
  });
  return out;
}

// ---------------------------------------------------------------- Functions
struct IndexState {
  Shape x_shape;
  size_t dim = 0;
};

struct IndexSelect : Function<IndexSelect> {
  static constexpr std::string_view kName = "index_select";
  using State = IndexState;
  // forward: out[.., k, ..] = x[.., index[k], ..]
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim, const Tensor& index) {
    check_index_dtype(index, "index_select");
    TG_CHECK(index.dim() <= 1, ShapeError, "index_select: index must be 1-D (or 0-d), got shape {}",
             index.shape());
    const size_t d = wrap_dim(dim, x.dim(), "index_select");
    const int64_t m = index.numel();
    TG_CHECK(x.dim() > 0 || m == 1, ShapeError,
             "index_select: x is 0-d, so index must hold exactly one id, got {}", m);
    check_ids(index, size_at(x.shape(), d), d, "index_select");

    Shape shape = x.shape();
    if (!shape.empty()) shape[d] = m;
    Tensor out = empty(shape, x.dtype());
    if (out.numel() > 0) {
      const Tensor xc = x.contiguous(), ic = index.contiguous();
      index_select_forward(static_cast<const char*>(xc.raw_data()), ic.data<int64_t>(), m,
                           static_cast<char*>(out.raw_data()), slabs(x.shape(), d),
                           x.element_size());
    }
    ctx.save_for_backward(index);
    ctx.state = {x.shape(), d};
    return out;
  }
  // backward: out[.., k, ..] = x[.., index[k], ..] reads x once per k, so
  //           dx[.., i, ..] = sum over k with index[k] == i of dout[.., k, ..]
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor(), Tensor()};
    const Tensor index = ctx.saved_tensors()[0].contiguous();
    const Tensor dout = g[0].contiguous();
    const Slabs s = slabs(ctx.state.x_shape, ctx.state.dim);
    return {scatter_add_grad(dout, ctx.state.x_shape,
                             [&](const auto* gp, auto* dx) {
                               index_select_backward(gp, index.data<int64_t>(), index.numel(), dx,
                                                     s);
                             }),
            Tensor()};
  }
};

struct Gather : Function<Gather> {
  static constexpr std::string_view kName = "gather";
  using State = IndexState;
  // forward: out[p] = x[p with its coordinate along dim replaced by index[p]]
  static Tensor forward(Context<State>& ctx, const Tensor& x, int64_t dim, const Tensor& index) {
    check_index_dtype(index, "gather");
    TG_CHECK(index.dim() == x.dim(), ShapeError,
             "gather: index of shape {} must have the rank of x, shape {} ({} vs {} dims)",
             index.shape(), x.shape(), index.dim(), x.dim());
    const size_t d = wrap_dim(dim, x.dim(), "gather");
    for (size_t k = 0; k < x.dim(); ++k) {
      TG_CHECK(k == d || index.shape()[k] <= x.shape()[k], ShapeError,
               "gather: index of shape {} is larger than x of shape {} in dim {} ({} > {}); only "
               "dim {} may be larger",
               index.shape(), x.shape(), k, index.shape()[k], x.shape()[k], d);
    }
    check_ids(index, size_at(x.shape(), d), d, "gather");

    Tensor out = empty(index.shape(), x.dtype());
    // Walking index's positions with x's strides (pinned at 0 along dim) lands on x[p with
    // coordinate 0]; the id then moves id * stride(dim) further.
    const Strides walk = pinned_strides(x.strides(), d);
    const int64_t step = stride_at(x.strides(), d);
    const int64_t* ids = index.data<int64_t>();
    visit_dtype(x.dtype(), [&]<class T>() {
      const T* px = x.data<T>();
      T* o = out.data<T>();
      detail::for_each_offset<3>(
          index.shape(), {&out.strides(), &walk, &index.strides()},
          [&](const auto& off) { o[off[0]] = px[off[1] + ids[off[2]] * step]; });
    });
    ctx.save_for_backward(index);
    ctx.state = {x.shape(), d};
    return out;
  }
  // backward: each out[p] read x at one place q(p), so dx[q] = sum over p with q(p) == q of
  //           dout[p] (repeated ids add up)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor(), Tensor()};
    const Tensor index = ctx.saved_tensors()[0];
    const Tensor& dout = g[0];
    const Strides dx_strides = contiguous_strides(ctx.state.x_shape);
    const Strides walk = pinned_strides(dx_strides, ctx.state.dim);
    const int64_t step = stride_at(dx_strides, ctx.state.dim);
    const int64_t* ids = index.data<int64_t>();
    auto add = [&](const auto* gp, auto* dx) {
      using A = std::remove_pointer_t<decltype(dx)>;
      detail::for_each_offset<3>(
          index.shape(), {&walk, &index.strides(), &dout.strides()},
          [&](const auto& off) { dx[off[0] + ids[off[1]] * step] += convert<A>(gp[off[2]]); });
    };
    return {scatter_add_grad(dout, ctx.state.x_shape, add), Tensor()};
  }
};

struct Where : Function<Where> {
  static constexpr std::string_view kName = "where";
  static constexpr AutocastRule kAutocast = AutocastRule::kPromote;  // core/autocast.h
  struct State {
    Shape a_shape, b_shape;
  };
  // forward: out = cond ? a : b, all three broadcast
  static Tensor forward(Context<State>& ctx, const Tensor& cond, const Tensor& a, const Tensor& b) {
    check_bool(cond, "where", "cond");
    detail::check_same_dtype(a, b, "where");
    const Shape shape =
        broadcast_shapes(cond.shape(), broadcast_shapes(a.shape(), b.shape(), "where (a with b)"),
                         "where (cond with a and b)");
    const Tensor c = cond.expand(shape), ea = a.expand(shape), eb = b.expand(shape);
    Tensor out = empty(shape, a.dtype());
    visit_dtype(a.dtype(), [&]<class T>() {
      const bool* pc = c.data<bool>();
      const T* pa = ea.data<T>();
      const T* pb = eb.data<T>();
      T* o = out.data<T>();
      detail::for_each_offset<4>(
          shape, {&out.strides(), &c.strides(), &ea.strides(), &eb.strides()},
          [&](const auto& off) { o[off[0]] = pc[off[1]] ? pa[off[2]] : pb[off[3]]; });
    });
    ctx.save_for_backward(cond);
    ctx.state = {a.shape(), b.shape()};
    return out;
  }
  // backward: d(out)/da = cond and d(out)/db = !cond (elementwise), so
  //           da = sum_to(cond ? dout : 0, a.shape), db = sum_to(cond ? 0 : dout, b.shape)
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const Tensor cond = ctx.saved_tensors()[0];
    return {Tensor(),
            ctx.needs_input_grad(1) ? sum_to(keep_where(g[0], cond, true), ctx.state.a_shape)
                                    : Tensor(),
            ctx.needs_input_grad(2) ? sum_to(keep_where(g[0], cond, false), ctx.state.b_shape)
                                    : Tensor()};
  }
};

// True when `from` broadcasts to exactly `to` (to itself is not stretched).
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 1; i <= from.size(); ++i) {
    const int64_t f = from[from.size() - i], t = to[to.size() - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

struct MaskedFill : Function<MaskedFill> {
  static constexpr std::string_view kName = "masked_fill";
  // forward: out = mask ? value : x
  static Tensor forward(Context<>& ctx, const Tensor& x, const Tensor& mask, double value) {
    check_bool(mask, "masked_fill", "mask");
    TG_CHECK(broadcasts_to(mask.shape(), x.shape()), ShapeError,
             "masked_fill: mask of shape {} does not broadcast to x's shape {}", mask.shape(),
             x.shape());
    const Tensor m = mask.expand(x.shape());
    Tensor out = empty(x.shape(), x.dtype());
    visit_dtype(x.dtype(), [&]<class T>() {
      const T fill = convert<T>(value);
      const T* px = x.data<T>();
      const bool* pm = m.data<bool>();
      T* o = out.data<T>();
      detail::for_each_offset<3>(
          x.shape(), {&out.strides(), &m.strides(), &x.strides()},
          [&](const auto& off) { o[off[0]] = pm[off[1]] ? fill : px[off[2]]; });
    });
    ctx.save_for_backward(mask);
    return out;
  }
  // backward: the value is a constant, so d(out)/dx = !mask and dx = mask ? 0 : dout
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor(), Tensor()};
    return {keep_where(g[0], ctx.saved_tensors()[0], false), Tensor()};
  }
};

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index, Here here) {
  return IndexSelect::apply_at(here, x, dim, index);
}
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, Here here) {
  return Gather::apply_at(here, x, dim, index);
}
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Here here) {
  return Where::apply_at(here, cond, a, b);
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, Here here) {
  return MaskedFill::apply_at(here, x, mask, value);
}

}  // namespace tg
