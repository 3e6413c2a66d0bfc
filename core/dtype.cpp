// core/dtype.cpp — names and sizes of the dtypes.
#include "core/dtype.h"

#include <ostream>

namespace tg {

std::string_view dtype_name(DType dtype) {
  return visit_dtype(dtype, []<class T>() -> std::string_view {
    if constexpr (std::is_same_v<T, float>) return "float32";
    else if constexpr (std::is_same_v<T, double>) return "float64";
    else if constexpr (std::is_same_v<T, Half>) return "float16";
    else if constexpr (std::is_same_v<T, BFloat16>) return "bfloat16";
    else if constexpr (std::is_same_v<T, int64_t>) return "int64";
    else return "bool";
  });
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }

size_t element_size(DType dtype) {
  return visit_dtype(dtype, []<class T>() { return sizeof(T); });
}

}  // namespace tg
