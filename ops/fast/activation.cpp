// ops/fast/activation.cpp — the fast kernels of relu and silu: the reference kernels'
// results (ops/activation.cpp), vectorised (core/simd.h) and split across threads by
// elements. Every element is computed on its own, so any split gives the same bits.
//
// relu: the same selections as whole-vector blends, with no branch per element to
// mispredict on the random signs of activations. silu: the same formulas with fast_sigmoid,
// whose exp is within a couple of ulp of std::exp; swiglu's fast kernels use the same one,
// so swiglu(x, x) == silu(x) * x holds on this path too.
#include "ops/activation.h"
#include "core/parallel.h"
#include "core/simd.h"
#include "ops/fast/install.h"

namespace tg::fast {
namespace {

using detail::simd_for;
using kernels::GradOut;

template <class F>
[[gnu::noinline]] void relu_forward_span(const F* __restrict x, F* __restrict y, int64_t n) {
  simd_for(n, [&](int64_t i) { y[i] = x[i] < F(0) ? F(0) : x[i]; });
}

// dy[i] is loaded for every i, before the choice: then the choice is a blend of two
// registers, not a branch around a load (which GCC would not vectorise).
template <class F, bool kAdd>
[[gnu::noinline]] void relu_backward_span(const F* __restrict y, const F* __restrict dy,
                                          F* __restrict dx, int64_t n) {
  simd_for(n, [&](int64_t i) {
    const F d = dy[i];
    const F g = y[i] <= F(0) ? F(0) : d;
    dx[i] = kAdd ? dx[i] + g : g;
  });
}

template <class F>
[[gnu::noinline]] void silu_forward_span(const F* __restrict x, F* __restrict y, int64_t n) {
  simd_for(n, [&](int64_t i) { y[i] = x[i] * detail::fast_sigmoid(x[i]); });
}

template <class F, bool kAdd>
[[gnu::noinline]] void silu_backward_span(const F* __restrict x, const F* __restrict dy,
                                          F* __restrict dx, int64_t n) {
  simd_for(n, [&](int64_t i) {
    const F s = detail::fast_sigmoid(x[i]);
    const F g = dy[i] * (s * (F(1) + x[i] * (F(1) - s)));
    dx[i] = kAdd ? dx[i] + g : g;
  });
}

template <class F>
void relu_forward(const F* x, F* y, int64_t n) {
  parallel_rows(n, 2, [&](int64_t i0, int64_t i1) { relu_forward_span(x + i0, y + i0, i1 - i0); });
}

template <class F>
void relu_backward(const F* y, const F* dy, GradOut<F> dx, int64_t n) {
  parallel_rows(n, 3, [&](int64_t i0, int64_t i1) {
    if (dx.add) relu_backward_span<F, true>(y + i0, dy + i0, dx.data + i0, i1 - i0);
    else relu_backward_span<F, false>(y + i0, dy + i0, dx.data + i0, i1 - i0);
  });
}

template <class F>
void silu_forward(const F* x, F* y, int64_t n) {
  parallel_rows(n, 2, [&](int64_t i0, int64_t i1) { silu_forward_span(x + i0, y + i0, i1 - i0); });
}

template <class F>
void silu_backward(const F* x, const F* dy, GradOut<F> dx, int64_t n) {
  parallel_rows(n, 3, [&](int64_t i0, int64_t i1) {
    if (dx.add) silu_backward_span<F, true>(x + i0, dy + i0, dx.data + i0, i1 - i0);
    else silu_backward_span<F, false>(x + i0, dy + i0, dx.data + i0, i1 - i0);
  });
}

}  // namespace

void install_activation() {
  kernels::relu_forward.set_fast(relu_forward<float>, relu_forward<double>);
  kernels::relu_backward.set_fast(relu_backward<float>, relu_backward<double>);
  kernels::silu_forward.set_fast(silu_forward<float>, silu_forward<double>);
  kernels::silu_backward.set_fast(silu_backward<float>, silu_backward<double>);
}

}  // namespace tg::fast
