// core/format.cpp — printing tensors the way PyTorch does.
//
//   tensor([[ 1.0000, -2.5000],
//           [ 0.0000,  3.0000]], dtype=float32, requires_grad=true)
//
// One format is chosen for the whole tensor so that the columns line up:
//   * all finite values integers      -> "1.", "-2."          (int mode)
//   * otherwise                       -> 4 decimals: "1.2500"
//   * either, when the magnitudes span more than 1000x, or exceed 1e8, or (non-int) go
//     below 1e-4                      -> scientific: "1.2500e+08"
// and every element is right-aligned to the widest one (for floats, the widest finite
// non-zero one, as in PyTorch). Beyond 1000 elements only the first and last 3 entries
// of each dim are shown, with "..." between them.
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tg {
namespace {

constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 80;

// One element, kept both ways: int64 values beyond 2^53 do not survive a double.
struct Value {
  double f;
  int64_t i;
};

// The element values that will be printed (all, or only the edges when summarising).
void collect(const Tensor& t, bool summarize, std::vector<Value>& out) {
  if (t.dim() == 0) {
    out.push_back(visit_dtype(t.dtype(), [&]<class T>() {
      const T x = t.item<T>();
      return Value{convert<double>(x), convert<int64_t>(x)};
    }));
    return;
  }
  const int64_t n = t.shape()[0];
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
    collect(t.select(0, i), summarize, out);
  }
}

class ElementFormatter {
 public:
  ElementFormatter(DType dtype, const std::vector<Value>& values) : dtype_(dtype) {
    const bool floating = is_floating_point(dtype);
    if (floating) choose_float_mode(values);
    for (const Value& v : values) {
      // As in PyTorch, only finite non-zero floats set the column width: nan, inf and 0
      // are padded to it but never widen it ("tensor([nan, 1.])", not "[nan,  1.]").
      if (floating && (!std::isfinite(v.f) || v.f == 0)) continue;
      width_ = std::max(width_, str(v).size());
    }
  }

  size_t width() const { return width_; }

  std::string str(const Value& value) const {
    if (dtype_ == DType::Bool) return value.i != 0 ? "true" : "false";
    if (dtype_ == DType::Int64) return fmt::format("{}", value.i);
    const double v = value.f;
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_mode_) return fmt::format("{:.4e}", v);
    if (int_mode_) return fmt::format("{:.0f}.", v);
    return fmt::format("{:.4f}", v);
  }

  std::string padded(const Value& v) const {
    std::string s = str(v);
    return std::string(width_ - std::min(width_, s.size()), ' ') + s;
  }

 private:
  void choose_float_mode(const std::vector<Value>& values) {
    double lo = INFINITY, hi = 0;
    bool any = false;
    for (const auto& [v, unused] : values) {
      if (!std::isfinite(v) || v == 0) continue;
      any = true;
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
      if (std::ceil(v) != v) int_mode_ = false;
    }
    if (!any) return;  // only zeros, infs and nans: int mode ("0.")
    sci_mode_ = hi / lo > 1000.0 || hi > 1e8 || (!int_mode_ && lo < 1e-4);
  }

  DType dtype_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;  // PyTorch's minimum, which also sets the wrapping of all-zero rows
};

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// values are consumed in the same order collect() produced them.
std::string render(const Tensor& t, size_t indent, bool summarize, const ElementFormatter& f,
                   const std::vector<Value>& values, size_t& next) {
  if (t.dim() == 0) return f.padded(values[next++]);
  const int64_t n = t.shape()[0];
  const bool cut = summarize && n > 2 * kEdgeItems;
  std::vector<std::string> parts;
  if (t.dim() == 1) {
    for (int64_t i = 0; i < n; ++i) {
      if (cut && i == kEdgeItems) {
        parts.push_back(" ...");  // PyTorch's 1-D marker: "2,  ..., 7" (rows use "...")
        i = n - kEdgeItems;
      }
      parts.push_back(f.padded(values[next++]));
    }
    // Wrap long rows: as many elements per line as fit in kLineWidth.
    const size_t per_line =
        std::max<size_t>(1, (kLineWidth - std::min(kLineWidth, indent)) / (f.width() + 2));
    std::vector<std::string> lines;
    for (size_t i = 0; i < parts.size(); i += per_line) {
      const auto end = std::min(parts.size(), i + per_line);
      lines.push_back(join({parts.begin() + i, parts.begin() + end}, ", "));
    }
    return "[" + join(lines, ",\n" + std::string(indent + 1, ' ')) + "]";
  }
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == kEdgeItems) {
      parts.push_back("...");
      i = n - kEdgeItems;
    }
    parts.push_back(render(t.select(0, i), indent + 1, summarize, f, values, next));
  }
  // Between sub-blocks: one newline per remaining dim, so 3-D blocks get a blank line.
  return "[" + join(parts, "," + std::string(t.dim() - 1, '\n') + std::string(indent + 1, ' ')) +
         "]";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  std::string body;
  if (numel() == 0) {
    body = dim() == 1 ? "[]" : fmt::format("[], size={}", shape());
  } else {
    const bool summarize = numel() > kSummarizeAbove;
    std::vector<Value> values;
    // Printing reads values through select() views: detached, so nothing is recorded.
    collect(detach(), summarize, values);
    const ElementFormatter f(dtype(), values);
    size_t next = 0;
    body = render(detach(), prefix.size(), summarize, f, values, next);
  }
  std::string out = prefix + body + fmt::format(", dtype={}", dtype());
  if (requires_grad()) out += ", requires_grad=true";
  return out + ")";
}

}  // namespace tg
