// core/broadcast.cpp — the broadcast result shape.
#include "core/broadcast.h"

#include "core/error.h"
#include "core/factories.h"
#include "core/strided_loop.h"

namespace tg {

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  // exercise tensor.broadcast_shapes: begin
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  // Walk from the last dim; i counts dims from the end (0 is the last).
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    TG_CHECK(da == db || da == 1 || db == 1, ShapeError,
             "{}: shapes {} and {} are not broadcastable: dim {} (from the end) is {} vs {}", op, a,
             b, -static_cast<int64_t>(i) - 1, da, db);
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
  // exercise tensor.broadcast_shapes: end
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;  // nothing was broadcast
  // exercise autograd.sum_to: begin
  TG_CHECK(broadcast_shapes(shape, grad.shape(), "sum_to") == grad.shape(), ShapeError,
           "sum_to: shape {} does not broadcast to the gradient's shape {}", shape, grad.shape());
  // Accumulate through a broadcast view of the result: its stride-0 dims send every copy
  // of an element to the same address. One pass over grad, in row-major order, so the
  // sums are the same on every run.
  const DType acc_dtype = grad.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor out = zeros(shape, acc_dtype);
  const Tensor target = out.expand(grad.shape());
  visit_dtype(grad.dtype(), [&]<class T>() {
    visit_dtype(acc_dtype, [&]<class A>() {
      if constexpr (std::is_floating_point_v<A>) {
        A* o = target.data<A>();
        const T* g = grad.data<T>();
        detail::for_each_offset<2>(grad.shape(), {&target.strides(), &grad.strides()},
                                   [&](const auto& off) { o[off[0]] += convert<A>(g[off[1]]); });
      }
    });
  });
  return acc_dtype == grad.dtype() ? out : out.to(grad.dtype());
  // exercise autograd.sum_to: end
}

}  // namespace tg
