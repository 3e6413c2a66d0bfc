// ops/fast/embedding.cpp — embedding's fast kernels.
//
// The forward copies rows on several threads (each output row is one copy). The backward
// cannot share the ids between threads: two threads could add into the same table row at
// once, and the order of the additions (so the rounding) would change with the thread count.
// Instead it first groups the ids by table row (a counting sort, which keeps the ids of one
// row in their original order), then shares the TABLE ROWS between threads: each row is the
// sum of its gradient rows, added in id order, exactly as in the reference loop, and written
// once (zero for a row no id hits). No zero-fill first, and when it adds into an existing
// .grad (ops/kernels.h) only the rows the ids hit are touched, instead of a (V, D) temporary
// being written and added in.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "core/simd.h"
#include "ops/embedding.h"
#include "ops/fast/install.h"

namespace tg::fast {
namespace {

using kernels::GradOut;

void embedding_forward(const int64_t* ids, const std::byte* table, std::byte* out, int64_t n_ids,
                       int64_t row_bytes) {
  if (row_bytes == 0) return;
  parallel_rows(n_ids, row_bytes / 2, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      std::memcpy(out + n * row_bytes, table + ids[n] * row_bytes, static_cast<size_t>(row_bytes));
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

/// row = (or +=, with `add`) dout[pos[0]] + dout[pos[1]] + ... + dout[pos[count-1]], added
/// left to right as in the reference loop; columns in blocks of kLanes to vectorise.
template <class F>
TG_WIDE_VECTORS void sum_gradient_rows(F* __restrict row, const F* __restrict dout,
                                       const int64_t* pos, int64_t count, int64_t dim,
                                       int64_t stride, bool add) {
  constexpr int64_t W = detail::kLanes;
  int64_t c = 0;
  for (; c + W <= dim; c += W) {
    F acc[W];
    for (int64_t j = 0; j < W; ++j) acc[j] = dout[pos[0] * stride + c + j];
    for (int64_t k = 1; k < count; ++k) {
      for (int64_t j = 0; j < W; ++j) acc[j] += dout[pos[k] * stride + c + j];
    }
    if (add) {
      for (int64_t j = 0; j < W; ++j) row[c + j] += acc[j];
    } else {
      for (int64_t j = 0; j < W; ++j) row[c + j] = acc[j];
    }
  }
  for (; c < dim; ++c) {
    F acc = dout[pos[0] * stride + c];
    for (int64_t k = 1; k < count; ++k) acc += dout[pos[k] * stride + c];
    row[c] = add ? row[c] + acc : acc;
  }
}

template <class F>
void embedding_backward(const int64_t* ids, const F* dout, int64_t dout_stride, GradOut<F> dtable,
                        int64_t n_ids, int64_t vocab, int64_t dim, int64_t padding_idx) {
  if (dim == 0) return;
  const IdsByRow g = group_by_row(ids, n_ids, vocab);
  // A table row costs its dim writes plus dim adds per id that hits it: n_ids / vocab ids
  // on average.
  const int64_t row_work = dim * (1 + n_ids / std::max<int64_t>(vocab, 1));
  parallel_rows(vocab, row_work, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      const int64_t count = v == padding_idx ? 0 : g.start[v + 1] - g.start[v];
      F* row = dtable.data + v * dim;
      if (count > 0) {
        sum_gradient_rows(row, dout, g.order.data() + g.start[v], count, dim, dout_stride,
                          dtable.add);
      } else if (!dtable.add) {
        std::fill(row, row + dim, F(0));
      }
    }
  });
}

}  // namespace

void install_embedding() {
  kernels::embedding_forward.set_fast(embedding_forward);
  kernels::embedding_backward.set_fast(embedding_backward<float>, embedding_backward<double>);
}

}  // namespace tg::fast
