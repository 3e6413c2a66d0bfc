// ops/matmul.cpp — matmul: the plain kernel, the shape rules, and the Function.
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
#include "ops/matmul.h"

#include <algorithm>

#include "core/parallel.h"
#include "ops/elementwise.h"
#include "ops/gemm.h"
#include "ops/reference_kernels.h"

namespace tg {
namespace {

// ---------------------------------------------------------------- raw kernel
/// out[s] += a[s] @ b[s] for s in [0, batch): a is (n, m), b (m, p), out (n, p), all
/// contiguous and row-major. The loops run i-k-j rather than the textbook i-j-k: then the
/// innermost loop walks a row of b and a row of out, both contiguous in memory, which
/// caches well and which the compiler can vectorise. This is the reference kernel; keep it
/// plain.
template <class C>
void matmul_kernel(const C* a, const C* b, C* out, int64_t batch, int64_t n, int64_t m, int64_t p) {
  for (int64_t s = 0; s < batch; ++s) {
    const C* as = a + s * n * m;
    const C* bs = b + s * m * p;
    C* os = out + s * n * p;
    for (int64_t i = 0; i < n; ++i) {
      C* out_row = os + i * p;
      for (int64_t k = 0; k < m; ++k) {
        const C a_ik = as[i * m + k];
        const C* b_row = bs + k * p;
        for (int64_t j = 0; j < p; ++j) out_row[j] += a_ik * b_row[j];
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

// ---------------------------------------------------------------- fast path
/// One operand as the fast kernel reads it: element (s, i, j) of the (batch..., rows, cols)
/// tensor is at base[batch_offset(s) + i * ld + j], or base[... + j * ld + i] if `trans`.
/// A transposed view (b.t() in backward) is read in place; anything else is copied.
struct GemmOperand {
  Tensor t;  // keeps the data alive; shape (batch..., rows, cols)
  bool trans = false;
  int64_t ld = 0;
};

GemmOperand as_gemm_operand(Tensor t) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t rs = t.stride(-2), cs = t.stride(-1);
  if (rs >= 0 && (cs == 1 || cols == 1)) return {t, false, rows == 1 ? cols : rs};
  if (cs >= 0 && (rs == 1 || rows == 1)) return {t, true, cols == 1 ? rows : cs};
  t = t.contiguous();
  return {t, false, cols};
}

/// Where batch element s (row-major over `batch`) of t starts, in elements.
int64_t batch_offset(const Tensor& t, const Shape& batch, int64_t s) {
  int64_t offset = 0;
  for (size_t d = batch.size(); d-- > 0;) {
    offset += (s % batch[d]) * t.stride(static_cast<int64_t>(d));
    s /= batch[d];
  }
  return offset;
}

/// The same product as below through ops/gemm.h, one gemm call per batch element; a
/// broadcast batch dim has stride 0 and is not copied. Batch elements are independent
/// products with outputs of their own, so threads split them (each output on one thread,
/// computed as one thread would: the result does not depend on the thread count). One big
/// product stays a single piece, and gemm may thread it inside.
template <class C>
void batched_gemm(const Tensor& ae, const Tensor& be, Tensor& out, const Shape& batch,
                  int64_t count) {
  const GemmOperand a = as_gemm_operand(ae), b = as_gemm_operand(be);
  const int64_t n = out.size(-2), m = ae.size(-1), p = out.size(-1);
  const C* a0 = a.t.data<C>();
  const C* b0 = b.t.data<C>();
  C* o0 = out.data<C>();
  // about 10 microseconds (~200k multiply-adds at a few per nanosecond) per thread piece
  const int64_t grain = std::max<int64_t>(1, 200000 / (2 * n * m * p + 1));
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      gemm(a.trans, b.trans, n, p, m, C(1), a0 + batch_offset(a.t, batch, s), a.ld,
           b0 + batch_offset(b.t, batch, s), b.ld, C(0), o0 + s * n * p, p);
    }
  });
}

/// a (..., n, m) @ b (..., m, p) -> (..., n, p), batch dims broadcast; shapes already
/// checked. Unless the reference kernels are switched on, this runs the blocked gemm
/// (ops/gemm.h) on the operands in place where their strides allow. The reference path runs
/// the kernel on contiguous copies in the compute type (double for float64,
/// float otherwise) and rounds once to the inputs' dtype at the end.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  const Shape batch = broadcast_shapes(batch_of(a.shape()), batch_of(b.shape()), "matmul");
  const int64_t n = a.size(-2), m = a.size(-1), p = b.size(-1);
  const DType ct = a.dtype() == kFloat64 ? kFloat64 : kFloat32;
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  if (!reference_kernels()) {
    auto view = [&](const Tensor& t, int64_t rows, int64_t cols) {
      const Tensor e = t.expand(with_matrix(batch, rows, cols));
      return e.dtype() == ct ? e : e.to(ct);
    };
    Tensor out = empty(with_matrix(batch, n, p), ct);
    if (count > 0) {
      visit_dtype(ct, [&]<class C>() {
        if constexpr (std::is_floating_point_v<C>) {
          batched_gemm<C>(view(a, n, m), view(b, m, p), out, batch, count);
        }
      });
    }
    return out.dtype() == a.dtype() ? out : out.to(a.dtype());
  }
  // A broadcast batch dim is copied out here: the kernel sees `count` separate products.
  auto prepare = [&](const Tensor& t, int64_t rows, int64_t cols) {
    const Tensor e = t.expand(with_matrix(batch, rows, cols));
    return e.dtype() == ct ? e.contiguous() : e.to(ct);
  };
  const Tensor ac = prepare(a, n, m), bc = prepare(b, m, p);
  Tensor out = zeros(with_matrix(batch, n, p), ct);
  visit_dtype(ct, [&]<class C>() {
    if constexpr (std::is_floating_point_v<C>) {
      matmul_kernel(ac.data<C>(), bc.data<C>(), out.data<C>(), count, n, m, p);
    }
  });
  return out.dtype() == a.dtype() ? out : out.to(a.dtype());
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
  const Shape ba = batch_of(s.a2), bb = batch_of(s.b2);
  const size_t rank = std::max(ba.size(), bb.size());
  Shape batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {  // i counts from the last batch dim
    const int64_t da = i < ba.size() ? ba[ba.size() - 1 - i] : 1;
    const int64_t db = i < bb.size() ? bb[bb.size() - 1 - i] : 1;
    TG_CHECK(da == db || da == 1 || db == 1, ShapeError,
             "matmul: {} @ {}: batch dims {} and {} do not broadcast ({} vs {})", sa, sb, ba, bb,
             da, db);
    batch[rank - 1 - i] = da == 1 ? db : da;
  }
  s.full = with_matrix(batch, n, p);
  s.out = batch;
  if (a.dim() > 1) s.out.push_back(n);
  if (b.dim() > 1) s.out.push_back(p);
  return s;
}

// ---------------------------------------------------------------- Function
struct Matmul : Function<Matmul> {
  static constexpr std::string_view kName = "matmul";
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

Tensor matmul(const Tensor& a, const Tensor& b, Here here) { return Matmul::apply_at(here, a, b); }

}  // namespace tg
