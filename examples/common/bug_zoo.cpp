// examples/common/bug_zoo.cpp — the specimens of the bug zoo and their repairs.
// Tests: tests/examples/bug_zoo_test.cpp. Course: docs/course/19-bug-zoo.md.
//
// Each specimen's broken kernel is written out in full, so that you can read the bug; its
// repair sits in the fenced function next to it (exercise bug_zoo.repairs).
#include "examples/common/bug_zoo.h"

#include <cmath>
#include <limits>

#include "ops/ops.h"

namespace tg::examples::zoo {
namespace {

// ---------------------------------------------------------------- bias_add
// forward: y_nc = x_nc + b_c. Each b_c is used by all N rows, so db_c = sum_n dy_nc.

/// The specimen: it copies the first row of dy, as if b were used once.
void broken_bias_grad(const double* dy, double* db, int64_t, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) db[c] = dy[c];
}

/// The repair: db (cols, zeroed by the caller) from dy (rows, cols).
void repaired_bias_grad(const double* dy, double* db, int64_t rows, int64_t cols) {
  // exercise bug_zoo.repairs: begin
  for (int64_t n = 0; n < rows; ++n) {
    for (int64_t c = 0; c < cols; ++c) db[c] += dy[n * cols + c];
  }
  // exercise bug_zoo.repairs: end
}

struct BiasAdd : Function<BiasAdd> {
  static constexpr std::string_view kName = "zoo_bias_add";
  struct State {
    Variant v = Variant::kBroken;
  };
  static Tensor forward(Context<State>& ctx, const Tensor& x, const Tensor& b, Variant v) {
    TG_CHECK(x.dtype() == kFloat64 && b.dtype() == kFloat64 && x.dim() == 2 && b.dim() == 1 &&
                 b.size(0) == x.size(1),
             ShapeError, "zoo_bias_add: needs float64 x (N, C) and b (C), got x {} {}, b {} {}",
             x.shape(), x.dtype(), b.shape(), b.dtype());
    ctx.state.v = v;
    return add(x, b).detach();  // the value only: this op records itself
  }
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const Tensor dy = g[0].contiguous();
    Tensor db = zeros({dy.size(1)}, kFloat64);
    (ctx.state.v == Variant::kBroken ? broken_bias_grad : repaired_bias_grad)(
        dy.data<double>(), db.data<double>(), dy.size(0), dy.size(1));
    return {g[0], db};
  }
};

// ---------------------------------------------------------------- gather_rows
// forward: out_n = table_{ids_n}. Row r of the table is used once per n with ids_n = r,
// so dtable_r = sum over those n of dout_n.

/// The specimen: each use writes over the one before, so a repeated id keeps one gradient.
void broken_scatter(const int64_t* ids, const double* dout, double* dtable, int64_t n_ids,
                    int64_t dim) {
  for (int64_t n = 0; n < n_ids; ++n) {
    for (int64_t d = 0; d < dim; ++d) dtable[ids[n] * dim + d] = dout[n * dim + d];
  }
}

/// The repair: dtable (V, dim, zeroed by the caller) from dout (n_ids, dim).
void repaired_scatter(const int64_t* ids, const double* dout, double* dtable, int64_t n_ids,
                      int64_t dim) {
  // exercise bug_zoo.repairs: begin
  for (int64_t n = 0; n < n_ids; ++n) {
    double* into = dtable + ids[n] * dim;
    for (int64_t d = 0; d < dim; ++d) into[d] += dout[n * dim + d];
  }
  // exercise bug_zoo.repairs: end
}

struct GatherRows : Function<GatherRows> {
  static constexpr std::string_view kName = "zoo_gather_rows";
  struct State {
    Variant v = Variant::kBroken;
    int64_t vocab = 0;
  };
  static Tensor forward(Context<State>& ctx, const Tensor& table, const Tensor& ids, Variant v) {
    TG_CHECK(
        table.dtype() == kFloat64 && table.dim() == 2 && ids.dtype() == kInt64 && ids.dim() == 1,
        ShapeError,
        "zoo_gather_rows: needs a float64 table (V, D) and int64 ids (N), got {} {} and {} {}",
        table.shape(), table.dtype(), ids.shape(), ids.dtype());
    ctx.state = {v, table.size(0)};
    ctx.save_for_backward(ids);
    return embedding(ids, table).detach();  // checks the ids; the value only
  }
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const Tensor ids = ctx.saved_tensors()[0], dout = g[0].contiguous();
    Tensor dtable = zeros({ctx.state.vocab, dout.size(1)}, kFloat64);
    (ctx.state.v == Variant::kBroken ? broken_scatter : repaired_scatter)(
        ids.data<int64_t>(), dout.data<double>(), dtable.data<double>(), ids.numel(), dout.size(1));
    return {dtable, Tensor()};
  }
};

// ---------------------------------------------------------------- rms_norm_f16
// y_c = x_c / sqrt(sum_c x_c^2 / C + eps). In float16 the sum of squares passes 65504, the
// largest float16, as soon as a row holds a few values near 256.

/// The specimen: the sum kept in float16, every partial sum rounded to it.
float broken_sum_of_squares(const Half* x, int64_t cols) {
  Half sum(0.0f);
  for (int64_t c = 0; c < cols; ++c) {
    sum = Half(static_cast<float>(sum) + static_cast<float>(x[c]) * static_cast<float>(x[c]));
  }
  return static_cast<float>(sum);
}

/// The repair: the sum of squares of one float16 row.
float repaired_sum_of_squares(const Half* x, int64_t cols) {
  // exercise bug_zoo.repairs: begin
  float total = 0;  // widened before anything is squared
  for (int64_t c = 0; c < cols; ++c) total += static_cast<float>(x[c]) * static_cast<float>(x[c]);
  return total;
  // exercise bug_zoo.repairs: end
}

}  // namespace

Tensor bias_add(const Tensor& x, const Tensor& b, Variant v) { return BiasAdd::apply(x, b, v); }

Tensor gather_rows(const Tensor& table, const Tensor& ids, Variant v) {
  return GatherRows::apply(table, ids, v);
}

Tensor rms_norm_f16(const Tensor& x, double eps, Variant v) {
  TG_CHECK(x.dtype() == kFloat16 && x.dim() == 2, DTypeError,
           "zoo_rms_norm_f16: needs a float16 (rows, C) tensor, got {} {}", x.shape(), x.dtype());
  const Tensor xc = x.contiguous();
  Tensor y = empty(x.shape(), kFloat16);
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    const Half* xr = xc.data<Half>() + r * cols;
    const float sum_sq =
        v == Variant::kBroken ? broken_sum_of_squares(xr, cols) : repaired_sum_of_squares(xr, cols);
    const float s = 1.0f / std::sqrt(sum_sq / static_cast<float>(cols) + static_cast<float>(eps));
    Half* yr = y.data<Half>() + r * cols;
    for (int64_t c = 0; c < cols; ++c) yr[c] = Half(static_cast<float>(xr[c]) * s);
  }
  return y;
}

// ---------------------------------------------------------------- causal_attention
bool visible(int64_t i, int64_t j, Variant v) {
  if (v == Variant::kBroken) return j <= i + 1;  // the specimen: one key too far
  // exercise bug_zoo.repairs: begin
  return j <= i;  // query i sees keys 0..i: itself and the past
  // exercise bug_zoo.repairs: end
}

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, Variant v_) {
  TG_CHECK(q.dim() == 3 && q.shape() == k.shape() && q.shape() == v.shape(), ShapeError,
           "zoo_causal_attention: q, k, v must share one (B, T, D) shape, got {}, {}, {}",
           q.shape(), k.shape(), v.shape());
  const int64_t T = q.size(1);
  Tensor keep = empty({T, T}, kBool);
  for (int64_t i = 0; i < T; ++i) {
    for (int64_t j = 0; j < T; ++j) keep.data<bool>()[i * T + j] = visible(i, j, v_);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(2)));
  const Tensor s = mul(matmul(q, k.transpose(1, 2)), scale);
  const Tensor masked =
      where(keep, s, full({}, -std::numeric_limits<double>::infinity(), s.dtype()));
  return matmul(softmax(masked, -1), v);
}

}  // namespace tg::examples::zoo
