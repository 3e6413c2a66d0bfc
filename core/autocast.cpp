// core/autocast.cpp — the autocast state, the rules' target dtypes, and the weight cache.
#include "core/autocast.h"

#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"

namespace tg {
namespace {

struct AutocastState {
  bool enabled = false;
  DType dtype = kBFloat16;
  int depth = 0;  // guards alive on this thread, enabled or not: the cache lives while > 0
  // The weight cache. Holding the leaf keeps its TensorImpl alive, so a pointer seen here
  // can never be a new tensor at a freed one's address; its storage version at the cast
  // tells a weight changed in place since (an optimizer step inside the guard) from one that
  // did not. A handful of weights per model: a linear search is as fast as a hash.
  struct Entry {
    Tensor leaf, cast;
    uint64_t version;
  };
  std::vector<Entry> cache;
};

thread_local AutocastState t_autocast;

int rank(DType dtype) {  // the promotion order of the floating dtypes
  switch (dtype) {
    case kFloat64: return 3;
    case kFloat32: return 2;
    default: return 1;  // float16, bfloat16
  }
}

}  // namespace

const char* autocast_rule_name(AutocastRule rule) {
  switch (rule) {
    case AutocastRule::kLowPrecision: return "low precision";
    case AutocastRule::kInFloat32: return "float32";
    case AutocastRule::kPromote: return "promote";
  }
  return "?";
}

bool autocast_enabled() { return t_autocast.enabled; }
DType autocast_dtype() { return t_autocast.dtype; }

AutocastGuard::AutocastGuard(DType dtype, bool enabled)
    : previous_enabled_(t_autocast.enabled), previous_dtype_(t_autocast.dtype) {
  TG_CHECK(dtype == kBFloat16 || dtype == kFloat16, DTypeError,
           "autocast: the low-precision dtype must be bfloat16 or float16, got {}",
           dtype_name(dtype));
  t_autocast.enabled = enabled;
  t_autocast.dtype = dtype;
  ++t_autocast.depth;
}

AutocastGuard::~AutocastGuard() {
  t_autocast.enabled = previous_enabled_;
  t_autocast.dtype = previous_dtype_;
  if (--t_autocast.depth == 0) t_autocast.cache.clear();
}

namespace detail {

DType autocast_target(AutocastRule rule, std::span<const DType> floating_inputs) {
  switch (rule) {
    case AutocastRule::kLowPrecision: return t_autocast.dtype;
    case AutocastRule::kInFloat32: return kFloat32;
    case AutocastRule::kPromote: break;
  }
  // The widest dtype present; float16 with bfloat16 meet at float32, as in PyTorch.
  DType widest = floating_inputs.empty() ? kFloat32 : floating_inputs[0];
  for (DType d : floating_inputs) {
    if (rank(d) > rank(widest)) widest = d;
    else if (rank(d) == 1 && rank(widest) == 1 && d != widest) widest = kFloat32;
  }
  return widest;
}

Tensor autocast_input(const Tensor& t, DType target, Here where) {
  if (!t.defined() || !is_floating_point(t.dtype()) || t.dtype() == kFloat64 ||
      t.dtype() == target) {
    return t;
  }
  // Only a weight (a leaf that requires grad) is cached, and only while the cast is
  // recorded: a cast made under no_grad has no node to carry a gradient back.
  const bool cacheable = t.is_leaf() && t.requires_grad() && grad_mode_enabled();
  if (!cacheable) return t.to(target, where);
  const uint64_t version = t.storage()->version();
  for (auto& e : t_autocast.cache) {
    if (e.leaf.impl() != t.impl() || e.cast.dtype() != target) continue;
    if (e.version != version) {  // changed in place since: cast it again
      e.cast = t.to(target, where);
      e.version = version;
    }
    return e.cast;
  }
  Tensor cast = t.to(target, where);
  t_autocast.cache.push_back({t, cast, version});
  return cast;
}

}  // namespace detail
}  // namespace tg
