// core/copy.cpp — element-wise copies: copy_, fill_, to, clone, contiguous.
//
// copy_ and fill_ write in place and are not differentiable (they refuse to write into a
// tensor the tape depends on). to, clone and contiguous make new tensors and are recorded
// on the tape: a copy moves values unchanged, so their backward passes dout through.
#include <array>
#include <cstring>
#include <type_traits>

#include "core/autograd.h"
#include "core/broadcast.h"
#include "core/factories.h"
#include "core/parallel.h"
#include "core/strided_loop.h"
#include "core/tensor.h"

namespace tg {
namespace {

// In-place writes into a tensor where two indices share one memory location (an
// expanded view) would make the result depend on the visiting order: refuse them.
void check_writable(const Tensor& t, const char* op) {
  for (size_t d = 0; d < t.dim(); ++d) {
    TG_CHECK(t.strides()[d] != 0 || t.shape()[d] <= 1, MisuseError,
             "{}: the destination of shape {} has stride 0 in dim {}, so several elements "
             "share one memory location (an expanded view); write into a .contiguous() copy "
             "instead",
             op, t.shape(), d);
  }
}

// In-place writes are not recorded on the tape, so they must not silently change a
// tensor the tape depends on; and each one bumps the storage's version counter so that a
// backward which saved this memory can tell it was overwritten.
void begin_inplace_write(const Tensor& t, const char* op) {
  if (grad_mode_enabled() && t.requires_grad()) {
    TG_CHECK(!t.is_leaf(), MisuseError,
             "{}: a leaf tensor that requires grad (shape {}) cannot be modified in place while "
             "grad mode is on; do the update under tg::NoGradGuard (as optimizers do)",
             op, t.shape());
    detail::raise<MisuseError>(
        "{}: the tensor of shape {} was made by a recorded op and in-place writes are not "
        "differentiable in tapegrad; use an out-of-place op, or write into .detach()",
        op, t.shape());
  }
  t.storage()->bump_version();
}

/// The pairs copied a run at a time: the same type (a memcpy per run), and float32 to and from
/// the 16-bit floating formats (the vectorised conversions of core/half.h).
template <class To, class From>
constexpr bool kRunCopyable = std::is_same_v<To, From> ||
                              (std::is_same_v<From, float> && detail::kIsHalfLike<To>) ||
                              (detail::kIsHalfLike<From> && std::is_same_v<To, float>);

/// dst[i] = src[i] for i < n, for the pairs of kRunCopyable.
template <class To, class From>
void copy_run(const From* src, To* dst, int64_t n) {
  if constexpr (std::is_same_v<To, From>) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(To));
  } else if constexpr (std::is_same_v<From, float>) {
    detail::narrow(src, dst, n);
  } else {
    detail::widen(src, dst, n);
  }
}

bool overlaps(const Tensor& a, const Tensor& b) {
  // Conservative: same storage and intersecting byte ranges.
  if (a.storage() != b.storage()) return false;
  auto range = [](const Tensor& t) {
    int64_t lo = t.storage_offset(), hi = t.storage_offset();
    for (size_t d = 0; d < t.dim(); ++d) {
      if (t.shape()[d] == 0) return std::array<int64_t, 2>{0, -1};
      hi += (t.shape()[d] - 1) * t.strides()[d];
    }
    return std::array<int64_t, 2>{lo, hi};
  };
  const auto ra = range(a), rb = range(b);
  return ra[0] <= rb[1] && rb[0] <= ra[1];
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src) {
  check_writable(*this, "copy_");
  begin_inplace_write(*this, "copy_");
  // Broadcast src to our shape (never the other way: the destination keeps its shape).
  const Shape out = broadcast_shapes(shape(), src.shape(), "copy_");
  TG_CHECK(out == shape(), ShapeError,
           "copy_: source of shape {} cannot be broadcast to the destination's shape {}",
           src.shape(), shape());
  // Reading and writing overlapping memory in one pass could read already-written
  // values (e.g. x.copy_(x.t())): copy the source aside first.
  // detach(): these views only read values, so nothing is recorded on the tape.
  const Tensor from = overlaps(*this, src) ? src.detach().clone() : src.detach();
  const Tensor view = from.expand(shape());
  visit_dtype(dtype(), [&]<class To>() {
    visit_dtype(from.dtype(), [&]<class From>() {
      To* dst = data<To>();
      const From* s = view.data<From>();
      // Runs of elements adjacent in both (the same type, or float32 <-> float16/bfloat16):
      // one memcpy or vectorised conversion per run rather than a step per element.
      if constexpr (kRunCopyable<To, From>) {
        // Both contiguous, or both dense in the same layout (a transposed view copied into
        // memory laid out like it, as round_to does): one flat run, wherever it starts.
        if ((is_contiguous() && view.is_contiguous()) ||
            (strides() == view.strides() && is_dense(shape(), strides()))) {
          parallel_rows(numel(), 2, [&](int64_t b, int64_t e) { copy_run(s + b, dst + b, e - b); });
          return;
        }
        // Rows contiguous in both (a view with heads transposed, say): one run per row. The
        // odometer walks a shape whose last dim is 1: one call per row.
        const Shape& n = shape();
        if (!n.empty() && n.back() >= 16 && strides().back() == 1 && view.strides().back() == 1) {
          Shape row_starts = n;
          row_starts[row_starts.size() - 1] = 1;
          const int64_t inner = n.back();
          parallel_rows(detail::rows_of(n), 2 * inner, [&](int64_t b, int64_t e) {
            detail::for_each_offset_in_rows<2>(
                row_starts, {&strides(), &view.strides()}, b, e,
                [&](const auto& o) { copy_run(s + o[1], dst + o[0], inner); });
          });
          return;
        }
      }
      // Each thread copies whole rows (runs along the last dim): no two write one element.
      const Shape& n = shape();
      const int64_t inner = n.empty() ? 1 : n.back();
      parallel_rows(detail::rows_of(n), 2 * inner, [&](int64_t b, int64_t e) {
        detail::for_each_offset_in_rows<2>(
            n, {&strides(), &view.strides()}, b, e,
            [&](const auto& o) { dst[o[0]] = convert<To>(s[o[1]]); });
      });
    });
  });
  return *this;
}

Tensor& Tensor::fill_(double value) {
  check_writable(*this, "fill_");
  begin_inplace_write(*this, "fill_");
  visit_dtype(dtype(), [&]<class T>() {
    const T v = convert<T>(value);
    T* dst = data<T>();
    detail::for_each_offset<1>(shape(), {&strides()}, [&](const auto& o) { dst[o[0]] = v; });
  });
  return *this;
}

// ---------------------------------------------------------------- differentiable copies
namespace {

// The copy itself, recording nothing (not even the expand inside copy_).
Tensor converted(const Tensor& x, DType dtype) {
  NoGradGuard no_grad;
  return empty(x.shape(), dtype).copy_(x);
}

struct To : Function<To> {
  static constexpr std::string_view kName = "to";
  struct State {
    DType x_dtype = kFloat32;
  };
  // forward: out = x converted to `dtype` (rounded to its precision)
  static Tensor forward(Context<State>& ctx, const Tensor& x, DType dtype) {
    ctx.state.x_dtype = x.dtype();
    return converted(x, dtype);
  }
  // backward: the rounding is treated as the identity (as PyTorch does), so dx = dout,
  // cast back to x's dtype: a float64 leaf used as float32 gets a float64 gradient
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    if (!ctx.needs_input_grad(0)) return {Tensor()};
    const DType x_dtype = ctx.state.x_dtype;
    return {g[0].dtype() == x_dtype ? g[0] : converted(g[0], x_dtype)};
  }
};

struct Clone : Function<Clone> {
  static constexpr std::string_view kName = "clone";
  // forward: out = x, in new contiguous memory
  static Tensor forward(Context<>&, const Tensor& x) { return converted(x, x.dtype()); }
  // backward: the identity, dx = dout
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    return {ctx.needs_input_grad(0) ? g[0] : Tensor()};
  }
};

struct Contiguous : Function<Contiguous> {
  static constexpr std::string_view kName = "contiguous";
  // forward: out = x, copied only if x is not contiguous already (when this call is
  // recorded and returns x itself, the tape gives the output a handle of its own)
  static Tensor forward(Context<>&, const Tensor& x) {
    return x.is_contiguous() ? x : converted(x, x.dtype());
  }
  // backward: the identity, dx = dout
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    return {ctx.needs_input_grad(0) ? g[0] : Tensor()};
  }
};

}  // namespace

Tensor Tensor::to(DType dtype, Here here) const {
  // An integer or bool result cannot carry a gradient: there is nothing to record.
  if (!is_floating_point(dtype)) return converted(*this, dtype);
  return To::apply_at(here, *this, dtype);
}

Tensor Tensor::clone(Here here) const { return Clone::apply_at(here, *this); }

Tensor Tensor::contiguous(Here here) const { return Contiguous::apply_at(here, *this); }

}  // namespace tg
