// core/broadcast.cpp — the broadcast result shape.
#include "core/broadcast.h"

#include "core/error.h"

namespace tg {

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
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
}

}  // namespace tg
