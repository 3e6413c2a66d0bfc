// ops/embedding.cpp — embedding: the reference kernels forward and backward, then the
// Function.
// Tests: tests/ops/embedding_test.cpp. Course: docs/course/08-embedding.md.
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
// The fast kernels (ops/fast/embedding.cpp) copy rows on several threads and, for the
// backward, share the table's rows between threads.
#include "ops/embedding.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/compute.h"

namespace tg {
namespace {

using detail::compute_type;
using kernels::GradOut;
using kernels::zero_unless_adding;

// ---------------------------------------------------------------- reference kernels
void embedding_forward(const int64_t* ids, const std::byte* table, std::byte* out, int64_t n_ids,
                       int64_t row_bytes) {
  if (row_bytes == 0) return;  // nothing to copy (and memcpy must not see a null pointer)
  // exercise embedding.forward: begin
  for (int64_t n = 0; n < n_ids; ++n) {
    const std::byte* row = table + ids[n] * row_bytes;  // row ids[n] of the table
    std::byte* dest = out + n * row_bytes;              // row n of the output
    std::memcpy(dest, row, static_cast<size_t>(row_bytes));
  }
  // exercise embedding.forward: end
}

/// The scatter-add derived at the top: dtable[ids[n]] += dout[n], except the padding row.
template <class F>
void embedding_backward(const int64_t* ids, const F* dout, int64_t dout_stride, GradOut<F> dtable,
                        int64_t n_ids, int64_t vocab, int64_t dim, int64_t padding_idx) {
  zero_unless_adding(dtable, vocab * dim);
  // exercise embedding.backward: begin
  for (int64_t n = 0; n < n_ids; ++n) {
    if (ids[n] == padding_idx) continue;
    F* row = dtable.data + ids[n] * dim;
    const F* g = dout + n * dout_stride;
    for (int64_t d = 0; d < dim; ++d) row[d] += g[d];
  }
  // exercise embedding.backward: end
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
    kernels::embedding_forward.get()(idc.data<int64_t>(),
                                     static_cast<const std::byte*>(tc.raw_data()),
                                     static_cast<std::byte*>(out.raw_data()), idc.numel(),
                                     dim * static_cast<int64_t>(table.element_size()));
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
    Tensor dout = g[0];
    const int64_t vocab = s.table_shape[0], dim = s.table_shape[1];
    int64_t dout_stride = dim;  // from one id's gradient row to the next
    if (broadcast_rows(dout) && dout.numel() > 0) {
      // The same row for every id (sum's backward expands one value; a broadcast upstream
      // gradient does the same): the kernel reads that one row n_ids times instead of an
      // (n_ids, D) copy of it. The sums are the same, term by term.
      Tensor row = empty({dim}, ct);
      row.copy_(dout.reshape({-1, dim}).select(0, 0));
      dout = row;
      dout_stride = 0;
    } else {
      dout = detail::as_compute(dout, ct);  // f16/bf16: accumulate in float32
    }
    const GradBuffer dtable = ctx.grad_buffer(1, s.table_shape, ct);
    detail::visit_compute(ct, [&]<class F>() {
      kernels::embedding_backward.get<F>()(ids.data<int64_t>(), dout.data<F>(), dout_stride,
                                           detail::grad_out<F>(dtable), ids.numel(), vocab, dim,
                                           s.padding_idx);
    });
    return {Tensor(), detail::finish_grad(dtable, s.dtype)};
  }
};

}  // namespace

constinit kernels::Kernel<kernels::EmbeddingForward> kernels::embedding_forward{
    tg::embedding_forward};
constinit kernels::KernelPair<kernels::EmbeddingBackward, float, double>
    kernels::embedding_backward{tg::embedding_backward<float>, tg::embedding_backward<double>};

Tensor embedding(const Tensor& ids, const Tensor& table, std::optional<int64_t> padding_idx,
                 Here here) {
  return Embedding::apply_at(here, ids, table, padding_idx);
}

}  // namespace tg
