// ops/embedding.cpp — embedding: the plain kernels forward and backward, then the Function.
//
// Shape legend: V = vocab, D = embedding width, N = number of ids (ids flattened).
//
// Forward: a row copy per id (no arithmetic, so every dtype is copied exactly):
//   out[n, d] = table[ids[n], d]
// Seen as a matmul with the one-hot matrix H (N, V), H[n, v] = [ids[n] == v]:
//   out = H @ table
// so, by Linear's rule for the weight (dW = dout^T x, here with x = H on the left):
//   dtable = H^T @ dout,   dtable[v, d] = sum over n with ids[n] == v of dout[n, d]
// H^T @ dout never needs H: for each n, ADD row n of dout into row ids[n] of dtable. That
// is a scatter-add; an id that appears k times gets the sum of k gradient rows, and a row
// whose id never appears gets 0. padding_idx zeroes its row's gradient (its column of H is
// treated as zero in the backward only).
//
// Bad ids are rejected before any read: an id is a memory address, and table + id * D with
// id = -1 or V would read (and in the backward, write) outside the table.
//
// Fast kernels (used unless tg::reference_kernels()). The forward copies rows on several
// threads (each output row is one copy). The backward cannot share the ids between threads:
// two threads could add into the same table row at once, and the order of the additions
// (so the rounding) would change with the thread count. Instead it first groups the ids by
// table row (a counting sort, which keeps the ids of one row in their original order), then
// shares the TABLE ROWS between threads: each row is the sum of its gradient rows, added in
// id order, exactly as in the plain loop, and written once (zero for a row no id hits). No
// zero-fill first, and when the table already has a .grad the engine lets the backward add
// the sums straight into it (Context::grad_destination): then only the rows the ids hit
// are touched, instead of a (V, D) temporary being written and added in.
#include "ops/embedding.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/factories.h"
#include "core/parallel.h"
#include "ops/compute.h"
#include "ops/reference_kernels.h"
#include "ops/vector_math.h"

namespace tg {
namespace {

using detail::compute_type;

// ---------------------------------------------------------------- raw kernels
/// out (N, D) = rows ids[n] of table (V, D). All contiguous; T is the storage type.
template <class T>
void embedding_forward_kernel(const int64_t* ids, const T* table, T* out, int64_t n_ids,
                              int64_t dim) {
  if (dim == 0) return;  // nothing to copy (and memcpy must not see a null pointer)
  for (int64_t n = 0; n < n_ids; ++n) {
    std::memcpy(out + n * dim, table + ids[n] * dim, static_cast<size_t>(dim) * sizeof(T));
  }
}

/// dtable (V, D) += dout (N, D) scattered by ids: dtable[ids[n]] += dout[n], skipping the
/// padding row (padding_idx < 0: none). F is the compute type (float or double).
template <class F>
void embedding_backward_kernel(const int64_t* ids, const F* dout, F* dtable, int64_t n_ids,
                               int64_t dim, int64_t padding_idx) {
  // exercise embedding.backward: begin
  for (int64_t n = 0; n < n_ids; ++n) {
    if (ids[n] == padding_idx) continue;
    F* row = dtable + ids[n] * dim;
    const F* g = dout + n * dim;
    for (int64_t d = 0; d < dim; ++d) row[d] += g[d];
  }
  // exercise embedding.backward: end
}

// ---------------------------------------------------------------- fast kernels
/// Table rows (or output rows) per thread piece: about 16k elements of work.
int64_t rows_grain(int64_t dim) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(dim, 1)); }

template <class T>
void embedding_forward_fast(const int64_t* ids, const T* table, T* out, int64_t n_ids,
                            int64_t dim) {
  if (dim == 0) return;
  parallel_for(n_ids, rows_grain(dim), [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      std::memcpy(out + n * dim, table + ids[n] * dim, static_cast<size_t>(dim) * sizeof(T));
    }
  });
}

/// The ids grouped by table row: positions order[start[v]], ..., order[start[v + 1] - 1] are
/// the n with ids[n] == v, in increasing n. A counting sort: count each row's ids, turn the
/// counts into starts (a prefix sum), then drop each n into its row's next free place.
struct IdsByRow {
  std::vector<int64_t> start, order;
};

IdsByRow group_by_row(const int64_t* ids, int64_t n_ids, int64_t vocab) {
  IdsByRow g;
  g.start.assign(static_cast<size_t>(vocab) + 1, 0);
  for (int64_t n = 0; n < n_ids; ++n) ++g.start[static_cast<size_t>(ids[n]) + 1];
  for (int64_t v = 0; v < vocab; ++v) g.start[v + 1] += g.start[v];
  std::vector<int64_t> next(g.start.begin(), g.start.end() - 1);
  g.order.resize(static_cast<size_t>(n_ids));
  for (int64_t n = 0; n < n_ids; ++n) g.order[static_cast<size_t>(next[ids[n]]++)] = n;
  return g;
}

/// row = (or +=, with `accumulate`) dout[pos[0]] + dout[pos[1]] + ... + dout[pos[count-1]],
/// added left to right as in the plain loop; columns in blocks of kLanes to vectorise. Row n
/// of dout starts at dout + n * stride (stride 0: every row is the same one).
template <class F>
TG_WIDE_VECTORS void sum_gradient_rows(F* __restrict row, const F* __restrict dout,
                                       const int64_t* pos, int64_t count, int64_t dim,
                                       int64_t stride, bool accumulate) {
  constexpr int64_t W = detail::kLanes<F>;
  int64_t c = 0;
  for (; c + W <= dim; c += W) {
    F acc[W];
    for (int64_t j = 0; j < W; ++j) acc[j] = dout[pos[0] * stride + c + j];
    for (int64_t k = 1; k < count; ++k) {
      for (int64_t j = 0; j < W; ++j) acc[j] += dout[pos[k] * stride + c + j];
    }
    if (accumulate) {
      for (int64_t j = 0; j < W; ++j) row[c + j] += acc[j];
    } else {
      for (int64_t j = 0; j < W; ++j) row[c + j] = acc[j];
    }
  }
  for (; c < dim; ++c) {
    F acc = dout[pos[0] * stride + c];
    for (int64_t k = 1; k < count; ++k) acc += dout[pos[k] * stride + c];
    row[c] = accumulate ? row[c] + acc : acc;
  }
}

/// dtable (V, D) = the scatter-add of dout by ids (every row written: zero where no id, or
/// the padding row), or with `accumulate` += into an existing gradient (rows no id hits are
/// left alone). Table rows are shared between threads.
template <class F>
void embedding_backward_fast(const int64_t* ids, const F* dout, int64_t dout_stride, F* dtable,
                             int64_t n_ids, int64_t vocab, int64_t dim, int64_t padding_idx,
                             bool accumulate) {
  if (dim == 0) return;
  const IdsByRow g = group_by_row(ids, n_ids, vocab);
  parallel_for(vocab, rows_grain(dim), [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      const int64_t count = v == padding_idx ? 0 : g.start[v + 1] - g.start[v];
      F* row = dtable + v * dim;
      if (count > 0) {
        sum_gradient_rows(row, dout, g.order.data() + g.start[v], count, dim, dout_stride,
                          accumulate);
      } else if (!accumulate) {
        std::fill(row, row + dim, F(0));
      }
    }
  });
}

// ---------------------------------------------------------------- helpers
/// Where element number `flat` of a tensor of `shape` sits: "(1, 0)"; "()" for a 0-d tensor.
std::string position(const Shape& shape, int64_t flat) {
  DimVec idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("{}", idx);
}

/// Every id (ids contiguous) lies in [0, V), or IndexError naming the first bad one.
void check_ids(const Tensor& ids, int64_t vocab) {
  const int64_t* p = ids.data<int64_t>();
  for (int64_t i = 0, n = ids.numel(); i < n; ++i) {
    TG_CHECK(p[i] >= 0 && p[i] < vocab, IndexError,
             "embedding: id {} at position {} of ids {} is out of range for a table of V = {} "
             "rows (ids must be in [0, {}))",
             p[i], position(ids.shape(), i), ids.shape(), vocab, vocab);
  }
}

/// True when every leading dim of dout has stride 0: all of its rows are one row.
bool broadcast_rows(const Tensor& dout) {
  for (size_t d = 0; d + 1 < dout.dim(); ++d) {
    if (dout.strides()[d] != 0 && dout.shape()[d] != 1) return false;
  }
  return dout.dim() >= 2;
}

// ---------------------------------------------------------------- Function
struct Embedding : Function<Embedding> {
  static constexpr std::string_view kName = "embedding";
  static constexpr bool kAddsIntoGrad = true;  // see Context::grad_destination
  struct State {
    Shape table_shape;         // (V, D)
    DType dtype = kFloat32;    // the table's
    int64_t padding_idx = -1;  // in [0, V), or -1 for none
  };

  // forward: out[n, d] = table[ids[n], d]
  static Tensor forward(Context<State>& ctx, const Tensor& ids, const Tensor& table,
                        std::optional<int64_t> padding_idx) {
    TG_CHECK(ids.dtype() == kInt64, DTypeError,
             "embedding: ids must have dtype int64, got {} (shape {}); convert with "
             ".to(tg::kInt64)",
             ids.dtype(), ids.shape());
    TG_CHECK(is_floating_point(table.dtype()), DTypeError,
             "embedding: table {} must be floating point, got {}", table.shape(), table.dtype());
    TG_CHECK(table.dim() == 2, ShapeError, "embedding: table must be 2-D (V, D), got shape {}",
             table.shape());
    const int64_t vocab = table.size(0), dim = table.size(1);
    int64_t pad = -1;
    if (padding_idx) {
      TG_CHECK(*padding_idx >= -vocab && *padding_idx < vocab, IndexError,
               "embedding: padding_idx {} is out of range for a table of V = {} rows (must be "
               "in [-{}, {}))",
               *padding_idx, vocab, vocab, vocab);
      pad = *padding_idx < 0 ? *padding_idx + vocab : *padding_idx;  // -1 is row V - 1
    }
    const Tensor idc = ids.contiguous();  // int64: never recorded
    check_ids(idc, vocab);                // before any read

    Shape out_shape = ids.shape();
    out_shape.push_back(dim);
    Tensor out = empty(out_shape, table.dtype());
    const Tensor tc = table.contiguous();
    visit_dtype(table.dtype(), [&]<class T>() {
      const auto kernel =
          reference_kernels() ? embedding_forward_kernel<T> : embedding_forward_fast<T>;
      kernel(idc.data<int64_t>(), tc.data<T>(), out.data<T>(), idc.numel(), dim);
    });
    ctx.save_for_backward(idc);  // the ids only: the table's values are not needed
    ctx.state = {table.shape(), table.dtype(), pad};
    return out;
  }

  // forward was: out[n, d] = table[ids[n], d]          (= one_hot(ids) @ table)
  // so:          dtable[v, d] = sum over n with ids[n] == v of dout[n, d]   (= one_hot^T @ dout)
  //              except dtable[padding_idx] = 0; ids get no gradient.
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(1)) return {Tensor(), Tensor()};
    const Tensor ids = ctx.saved_tensors()[0];
    const State& s = ctx.state;
    const DType ct = compute_type(s.dtype);
    const bool plain = reference_kernels();
    // f16/bf16: accumulate in float32, round once per element at the end.
    Tensor dout = g[0];
    const int64_t dim = s.table_shape[1];
    int64_t dout_stride = dim;  // from one id's gradient row to the next
    if (!plain && broadcast_rows(dout) && dout.numel() > 0) {
      // The same row for every id (sum's backward expands one value; a broadcast upstream
      // gradient does the same): the fast kernel reads that one row n_ids times instead of
      // an (n_ids, D) copy of it. The sums are the same, term by term.
      Tensor row = empty({dim}, ct);
      row.copy_(dout.reshape({-1, dim}).select(0, 0));
      dout = row;
      dout_stride = 0;
    } else if (dout.dtype() != ct || !dout.is_contiguous()) {
      Tensor c = empty(dout.shape(), ct);
      c.copy_(dout);
      dout = c;
    }
    // The fast kernel adds into table.grad when the engine offers it (float32/float64
    // tables: the gradient is in the compute type), else it writes every row of a new dtable.
    const Tensor into = ctx.grad_destination(1);
    const bool accumulate =
        !plain && into.defined() && into.dtype() == ct && into.storage() != dout.storage();
    Tensor dtable = accumulate ? into : plain ? zeros(s.table_shape, ct) : empty(s.table_shape, ct);
    visit_dtype(ct, [&]<class F>() {
      if constexpr (std::is_floating_point_v<F>) {
        if (plain) {
          embedding_backward_kernel(ids.data<int64_t>(), dout.data<F>(), dtable.data<F>(),
                                    ids.numel(), s.table_shape[1], s.padding_idx);
        } else {
          embedding_backward_fast(ids.data<int64_t>(), dout.data<F>(), dout_stride,
                                  dtable.data<F>(), ids.numel(), s.table_shape[0], dim,
                                  s.padding_idx, accumulate);
        }
      }
    });
    if (accumulate) return {Tensor(), into};  // already added into table.grad
    if (s.dtype != ct) {
      Tensor rounded = empty(s.table_shape, s.dtype);
      rounded.copy_(dtable);
      dtable = rounded;
    }
    return {Tensor(), dtable};
  }
};

}  // namespace

Tensor embedding(const Tensor& ids, const Tensor& table, std::optional<int64_t> padding_idx,
                 Here here) {
  return Embedding::apply_at(here, ids, table, padding_idx);
}

}  // namespace tg
