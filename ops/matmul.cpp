// ops/matmul.cpp — matmul: the reference kernel, the shape rules, and the Function.
// Tests: tests/ops/matmul_test.cpp. Course: docs/course/02-autograd.md (matmul's backward).
//
// Shape legend: n = rows of a, m = inner dim, p = columns of b, `...` = batch dims.
//
// Every case of torch.matmul reduces to one computation, a batch of matrix products:
//   1. promote a 1-D input to a matrix: a (m) -> (1, m), b (m) -> (m, 1);
//   2. broadcast the batch dims (everything before the last two) against each other;
//   3. out[...] = a[...] @ b[...], one (n, m) @ (m, p) product per batch index;
//   4. remove the size-1 dims that step 1 added.
//
// Math, per batch index:  out_ij = sum_k a_ik * b_kj
// Backward:               da_ik = sum_j dout_ij * b_kj   i.e. da = dout @ b^T
//                         db_kj = sum_i a_ik * dout_ij   i.e. db = a^T @ dout
// then undo steps 2 and 1: sum over the batch dims an input was broadcast along (sum_to),
// and drop the promoted dims again (reshape).
//
// The fast kernel (ops/fast/matmul.cpp) runs each product on the blocked GEMM.
#include "ops/matmul.h"

#include <algorithm>
#include <string>

#include "ops/compute.h"
#include "ops/elementwise.h"

namespace tg {
namespace {

using kernels::MatrixBatch;

// ---------------------------------------------------------------- reference kernel
/// out[s] = a[s] @ b[s], for every batch entry s. The loops run i-k-j rather than the
/// textbook i-j-k: then the innermost loop walks a row of b and a row of out, which caches
/// well when b is row-major.
template <class F>
void matmul_forward(const MatrixBatch<F>& a, const MatrixBatch<F>& b, F* out, int64_t count,
                    int64_t n, int64_t m, int64_t p) {
  for (int64_t s = 0; s < count; ++s) {
    const int64_t as = a.offset(s), bs = b.offset(s);
    for (int64_t i = 0; i < n; ++i) {
      F* out_row = out + (s * n + i) * p;
      for (int64_t j = 0; j < p; ++j) out_row[j] = 0;
      for (int64_t k = 0; k < m; ++k) {
        const F a_ik = a.at(as, i, k);
        for (int64_t j = 0; j < p; ++j) out_row[j] += a_ik * b.at(bs, k, j);
      }
    }
  }
}

/// The batch dims of a matrix-shaped tensor: all but the last two.
Shape batch_of(const Shape& shape) {
  Shape batch;
  for (size_t i = 0; i + 2 < shape.size(); ++i) batch.push_back(shape[i]);
  return batch;
}

Shape with_matrix(Shape batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

/// a (..., n, m) @ b (..., m, p) -> (..., n, p), batch dims broadcast (shapes already
/// checked), in the compute type, rounded once to the inputs' dtype. Each operand is read in
/// place when its last two dims are a row-major or transposed matrix (b.t() in the backward);
/// otherwise it is copied to a contiguous one. A broadcast batch dim is read with stride 0.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  const Shape batch = broadcast_shapes(batch_of(a.shape()), batch_of(b.shape()), "matmul");
  const int64_t n = a.size(-2), m = a.size(-1), p = b.size(-1);
  const DType ct = detail::compute_type(a.dtype());
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  Tensor out = empty(with_matrix(batch, n, p), ct);
  if (count == 0) return detail::round_to(out, a.dtype());
  // t expanded to (batch..., rows, cols), in place where its strides allow.
  auto operand = [&](const Tensor& t, int64_t rows, int64_t cols) {
    Tensor e = t.expand(with_matrix(batch, rows, cols));
    if (e.dtype() != ct) e = e.to(ct);
    const int64_t rs = e.stride(-2), cs = e.stride(-1);
    const bool row_major = rs >= 0 && (cs == 1 || cols == 1);
    const bool transposed = cs >= 0 && (rs == 1 || rows == 1);
    if (!row_major && !transposed) e = e.contiguous();
    return e;
  };
  const Tensor ae = operand(a, n, m), be = operand(b, m, p);
  detail::visit_compute(ct, [&]<class F>() {
    auto view = [&](const Tensor& e) {
      MatrixBatch<F> mb;
      mb.data = e.data<F>();
      mb.rs = e.stride(-2);
      mb.cs = e.stride(-1);
      mb.batch = batch;
      for (size_t d = 0; d < batch.size(); ++d) {
        mb.batch_strides.push_back(e.stride(static_cast<int64_t>(d)));
      }
      return mb;
    };
    kernels::matmul_forward.get<F>()(view(ae), view(be), out.data<F>(), count, n, m, p);
  });
  return detail::round_to(out, a.dtype());
}

// ---------------------------------------------------------------- shape rules
struct MatmulShapes {
  Shape a2, b2;  // a and b promoted to matrices (step 1)
  Shape full;    // the batched result (..., n, p) before step 4
  Shape out;     // the result
};

MatmulShapes plan(const Tensor& a, const Tensor& b) {
  const Shape &sa = a.shape(), &sb = b.shape();
  TG_CHECK(a.dim() >= 1 && b.dim() >= 1, ShapeError,
           "matmul: {} @ {}: both arguments need at least 1 dim, got a 0-d tensor (use mul to "
           "scale by a scalar)",
           sa, sb);
  TG_CHECK(is_floating_point(a.dtype()) && is_floating_point(b.dtype()), DTypeError,
           "matmul: {} @ {}: expects floating-point tensors, got {} and {}", sa, sb, a.dtype(),
           b.dtype());
  TG_CHECK(a.dtype() == b.dtype(), DTypeError,
           "matmul: {} @ {}: dtypes differ, {} vs {}; convert one with .to()", sa, sb, a.dtype(),
           b.dtype());
  MatmulShapes s;
  s.a2 = sa;
  if (a.dim() == 1) s.a2.insert(0, 1);  // (m) -> (1, m)
  s.b2 = sb;
  if (b.dim() == 1) s.b2.push_back(1);  // (m) -> (m, 1)
  const int64_t n = s.a2[s.a2.size() - 2], m = s.a2.back();
  const int64_t mb = s.b2[s.b2.size() - 2], p = s.b2.back();
  TG_CHECK(m == mb, ShapeError, "matmul: {} @ {}: inner dims {} vs {}", sa, sb, m, mb);
  // The batch dims broadcast like the shapes of an elementwise op.
  const Shape ba = batch_of(s.a2), bb = batch_of(s.b2);
  const std::string what = fmt::format("matmul: {} @ {}: batch dims {} and {}", sa, sb, ba, bb);
  const Shape batch = broadcast_shapes(ba, bb, what);
  s.full = with_matrix(batch, n, p);
  s.out = batch;
  if (a.dim() > 1) s.out.push_back(n);
  if (b.dim() > 1) s.out.push_back(p);
  return s;
}

// ---------------------------------------------------------------- Function
struct Matmul : Function<Matmul> {
  static constexpr std::string_view kName = "matmul";
  static constexpr AutocastRule kAutocast = AutocastRule::kLowPrecision;  // core/autocast.h
  struct State {
    MatmulShapes shapes;
  };
  // forward: out = a2 @ b2, batched and broadcast, then reshaped to drop the promoted dims
  static Tensor forward(Context<State>& ctx, const Tensor& a, const Tensor& b) {
    const MatmulShapes s = plan(a, b);
    ctx.state = {s};
    ctx.save_for_backward(a, b);
    return batched_matmul(a.reshape(s.a2), b.reshape(s.b2)).view(s.out);
  }
  // backward: out = a2 @ b2, so da2 = dout @ b2^T and db2 = a2^T @ dout (see the top of the
  //           file); each is summed back over the batch dims its input was broadcast
  //           along, then reshaped to the input's own shape (undoing the 1-D promotion).
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor &a = saved[0], &b = saved[1];
    const MatmulShapes& s = ctx.state.shapes;
    const Tensor dout = g[0].reshape(s.full);
    Tensor da, db;
    if (ctx.needs_input_grad(0)) {
      const Tensor bt = b.reshape(s.b2).transpose(-1, -2);
      da = sum_to(batched_matmul(dout, bt), s.a2).reshape(a.shape());
    }
    if (ctx.needs_input_grad(1)) {
      const Tensor at = a.reshape(s.a2).transpose(-1, -2);
      db = sum_to(batched_matmul(at, dout), s.b2).reshape(b.shape());
    }
    return {da, db};
  }
};

}  // namespace

constinit kernels::KernelPair<kernels::MatmulForward, float, double> kernels::matmul_forward{
    tg::matmul_forward<float>, tg::matmul_forward<double>};

Tensor matmul(const Tensor& a, const Tensor& b, Here here) { return Matmul::apply_at(here, a, b); }

}  // namespace tg
