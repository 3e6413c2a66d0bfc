// ops/elementwise.cpp — argument checks shared by the elementwise ops.
// Tests: tests/ops/elementwise_test.cpp. Course: none (the loops under the elementwise ops).
#include "ops/elementwise.h"

namespace tg::detail {

void check_floating(const Tensor& t, const char* op) {
  TG_CHECK(is_floating_point(t.dtype()), DTypeError,
           "{}: expects a floating-point tensor, got dtype {} (shape {})", op, t.dtype(),
           t.shape());
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  TG_CHECK(a.dtype() == b.dtype(), DTypeError,
           "{}: inputs have different dtypes, {} (shape {}) and {} (shape {}); convert one with "
           ".to()",
           op, a.dtype(), a.shape(), b.dtype(), b.shape());
}

}  // namespace tg::detail
