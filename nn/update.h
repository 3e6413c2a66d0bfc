// nn/update.h — what every optimizer's step() does around its update kernel (internal to
// nn/sgd.cpp, nn/adam.cpp): pick the parameter's element type, check and fetch its
// gradient, and write the update into the parameter in place.
#pragma once

#include <string_view>

#include "core/autograd.h"

namespace tg::nn::detail {

/// Calls fn.template operator()<T>() for the four floating-point dtypes only.
template <class Fn>
void visit_floating(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    case DType::Float16: return fn.template operator()<Half>();
    case DType::BFloat16: return fn.template operator()<BFloat16>();
    default: tg::detail::raise<DTypeError>("optimizer: dtype {} is not floating point", dtype);
  }
}

/// Runs `update(work)` on contiguous memory holding parameter p's values: p itself when it is
/// contiguous, otherwise a contiguous copy that is written back. Either way the storage's
/// version is bumped, so a backward that saved p before this step will refuse to run.
template <class Fn>
void update_in_place(const Tensor& p, Fn&& update) {
  if (p.is_contiguous()) {
    update(p);
    p.storage()->bump_version();
  } else {
    const Tensor work = p.detach().clone();
    update(work);
    Tensor(p).copy_(work);  // bumps the version; allowed because the caller holds a NoGradGuard
  }
}

/// The gradient of parameter i, checked against it, as contiguous memory.
inline Tensor checked_grad(std::string_view opt, size_t i, const Tensor& p) {
  const Tensor g = p.grad();
  TG_CHECK(g.shape() == p.shape() && g.dtype() == p.dtype(), ShapeError,
           "{}.step: parameter {} has shape {} and dtype {} but its gradient has shape {} and "
           "dtype {}",
           opt, i, p.shape(), p.dtype(), g.shape(), g.dtype());
  return g.detach().contiguous();
}

}  // namespace tg::nn::detail
