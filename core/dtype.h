// core/dtype.h — the element types a Tensor can hold, and how to move between them.
//
//   DType      C++ type     bytes   notes
//   Float32    float          4     the default for factories and parameters
//   Float64    double         8     gradcheck's dtype
//   Float16    tg::Half       2     storage only: kernels compute in float
//   BFloat16   tg::BFloat16   2     storage only: kernels compute in float
//   Int64      int64_t        8     indices, token ids, class targets
//   Bool       bool           1     masks (stored as one byte, 0 or 1)
//
// Kernels are written once as templates and instantiated per dtype with visit_dtype:
//
//   visit_dtype(t.dtype(), [&]<class T>() { T* p = t.data<T>(); ... });
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string_view>
#include <type_traits>

#include "core/error.h"
#include "core/half.h"

namespace tg {

enum class DType : uint8_t { Float32, Float64, Float16, BFloat16, Int64, Bool };

inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kBool = DType::Bool;

/// PyTorch's name: "float32", "float64", "float16", "bfloat16", "int64", "bool".
std::string_view dtype_name(DType dtype);
/// Streams the name, so `std::cout << dtype` and GoogleTest messages read "float32".
std::ostream& operator<<(std::ostream& os, DType dtype);
/// Bytes per element.
size_t element_size(DType dtype);
/// True for the four floating-point dtypes.
constexpr bool is_floating_point(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Float16 ||
         dtype == DType::BFloat16;
}

/// The DType of a C++ element type: dtype_of<float> == DType::Float32.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else if constexpr (std::is_same_v<T, double>) return DType::Float64;
  else if constexpr (std::is_same_v<T, Half>) return DType::Float16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DType::BFloat16;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::Int64;
  else if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else static_assert(sizeof(T) == 0, "tapegrad has no dtype for this C++ type");
}

/// Calls fn.template operator()<T>() with the C++ type T of `dtype`.
template <class Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    case DType::Float16: return fn.template operator()<Half>();
    case DType::BFloat16: return fn.template operator()<BFloat16>();
    case DType::Int64: return fn.template operator()<int64_t>();
    case DType::Bool: return fn.template operator()<bool>();
  }
  detail::raise<Error>("visit_dtype: corrupt dtype value {}", static_cast<int>(dtype));
}

namespace detail {
template <class T>
constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Saturating float -> int64: C++ leaves out-of-range casts undefined, so we define them
// the way Rust's `as` does: NaN -> 0, too large -> the nearest representable end.
template <class F>
int64_t saturate_to_int64(F x) {
  if (std::isnan(x)) return 0;
  if (x >= static_cast<F>(9223372036854775808.0)) return std::numeric_limits<int64_t>::max();
  if (x < static_cast<F>(-9223372036854775808.0)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);  // truncates toward zero, like PyTorch
}
}  // namespace detail

/// Converts one element between any two tapegrad element types.
/// Floating -> int64 truncates toward zero and saturates (NaN -> 0); anything -> bool is
/// `!= 0` (so NaN -> true); int64 -> float16/bfloat16 goes through double (exact for
/// |x| <= 2^53, far beyond both formats' precision).
template <class To, class From>
To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (detail::kIsHalfLike<From>) {
    return convert<To>(static_cast<float>(x));  // widening is exact
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From{0};
  } else if constexpr (detail::kIsHalfLike<To>) {
    if constexpr (std::is_floating_point_v<From>) return To(x);  // rounded once, from x
    else return To(static_cast<double>(x));
  } else if constexpr (std::is_same_v<To, int64_t> && std::is_floating_point_v<From>) {
    return detail::saturate_to_int64(x);
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace tg

template <>
struct fmt::formatter<tg::DType> : fmt::formatter<std::string_view> {
  auto format(tg::DType d, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(tg::dtype_name(d), ctx);
  }
};
