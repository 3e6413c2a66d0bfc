// ops/fast/linear.cpp — linear's fast kernels: the three products of ops/linear.cpp on the
// blocked GEMM (ops/fast/gemm.h), which reads W^T and dy^T in place: y = x W^T is the NT
// case, dx = dy W is NN, dW = dy^T x is TN. A gradient to add into an existing .grad is the
// GEMM's beta = 1 (ops/kernels.h's write rule).
#include <algorithm>
#include <vector>

#include "core/simd.h"
#include "ops/fast/gemm.h"
#include "ops/fast/install.h"
#include "ops/linear.h"

namespace tg::fast {
namespace {

using kernels::GradOut;

/// y = x W^T + b: y starts as b in every row, then gemm adds x W^T to it (beta = 1).
template <class F>
void linear_forward(const F* x, const F* w, const F* b, F* y, int64_t rows, int64_t in,
                    int64_t out) {
  if (b != nullptr) {
    for (int64_t n = 0; n < rows; ++n) std::copy(b, b + out, y + n * out);
  }
  gemm(false, true, rows, out, in, F(1), x, in, w, in, b != nullptr ? F(1) : F(0), y, out);
}

/// db = sum_n dy: each row of dy is added into all of db at once, a vector of columns per
/// instruction; every db_o still adds its rows in the order n = 0, 1, ...
template <class F>
[[gnu::noinline]] void column_sums(const F* __restrict dy, F* __restrict db, int64_t rows,
                                   int64_t out) {
  std::fill(db, db + out, F(0));
  for (int64_t n = 0; n < rows; ++n) {
    const F* __restrict row = dy + n * out;
    detail::simd_for(out, [&](int64_t o) { db[o] += row[o]; });
  }
}

/// db += one row, a vector of columns per instruction.
[[gnu::noinline]] void add_row(const float* __restrict row, float* __restrict db, int64_t out) {
  detail::simd_for(out, [&](int64_t o) { db[o] += row[o]; });
}

/// The same sums over bfloat16 rows, each widened into a buffer of one row: the same
/// additions in the same order as column_sums on a widened copy of dy, without the copy.
void column_sums(const BFloat16* dy, float* db, int64_t rows, int64_t out) {
  std::fill(db, db + out, 0.0f);
  std::vector<float> row(static_cast<size_t>(out));
  for (int64_t n = 0; n < rows; ++n) {
    detail::widen(dy + n * out, row.data(), out);
    add_row(row.data(), db, out);
  }
}

template <class F>
void linear_backward(const F* dy, const F* x, const F* w, GradOut<F> dx, GradOut<F> dw,
                     GradOut<F> db, int64_t rows, int64_t in, int64_t out) {
  if (dx) gemm(false, false, rows, in, out, F(1), dy, out, w, in, F(dx.add ? 1 : 0), dx.data, in);
  if (dw) gemm(true, false, out, in, rows, F(1), dy, out, x, in, F(dw.add ? 1 : 0), dw.data, in);
  if (db && !db.add) column_sums(dy, db.data, rows, out);
  if (db && db.add) {  // the whole sum first, then one addition, as the engine would
    std::vector<F> sum(static_cast<size_t>(out));
    column_sums(dy, sum.data(), rows, out);
    for (int64_t o = 0; o < out; ++o) db[o] += sum[static_cast<size_t>(o)];
  }
}

/// The same three products on bfloat16 operands (ops/fast/gemm.h: exact products, float32
/// sums). y is rounded to bfloat16 tile by tile (gemm_round); db sums dy's rows in float32.
void linear_forward_bf16(const BFloat16* x, const BFloat16* w, const float* b, BFloat16* y,
                         int64_t rows, int64_t in, int64_t out) {
  gemm_round(false, true, rows, out, in, x, in, w, in, b, y, out);
}

void linear_backward_bf16(const BFloat16* dy, const BFloat16* x, const BFloat16* w, BFloat16* dx,
                          GradOut<float> dw, GradOut<float> db, int64_t rows, int64_t in,
                          int64_t out) {
  if (dx != nullptr) gemm_round(false, false, rows, in, out, dy, out, w, in, nullptr, dx, in);
  if (dw) gemm(true, false, out, in, rows, 1.0f, dy, out, x, in, dw.add ? 1.0f : 0.0f, dw.data, in);
  if (db) {
    std::vector<float> sum(static_cast<size_t>(out));
    column_sums(dy, sum.data(), rows, out);
    for (int64_t o = 0; o < out; ++o) db.put(o, sum[static_cast<size_t>(o)]);
  }
}

}  // namespace

void install_linear() {
  kernels::linear_forward.set_fast(linear_forward<float>, linear_forward<double>);
  kernels::linear_backward.set_fast(linear_backward<float>, linear_backward<double>);
  kernels::linear_forward_bf16.set_fast(linear_forward_bf16);
  kernels::linear_backward_bf16.set_fast(linear_backward_bf16);
}

}  // namespace tg::fast
