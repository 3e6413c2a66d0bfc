// ops/reference_kernels.cpp — the global switch, read once from the environment.
#include "ops/reference_kernels.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace tg {
namespace {

// On in a learner's student tree (tools/student_tree.cpp), where the exercises are the
// plain kernels; off everywhere else. TAPEGRAD_REFERENCE_KERNELS=1 or =0 overrides it.
#ifndef TAPEGRAD_REFERENCE_KERNELS_BY_DEFAULT
#define TAPEGRAD_REFERENCE_KERNELS_BY_DEFAULT 0
#endif

bool from_environment() {
  const char* value = std::getenv("TAPEGRAD_REFERENCE_KERNELS");
  if (value == nullptr) return TAPEGRAD_REFERENCE_KERNELS_BY_DEFAULT != 0;
  return std::strcmp(value, "1") == 0;
}

std::atomic<bool>& flag() {
  static std::atomic<bool> on{from_environment()};
  return on;
}

}  // namespace

void set_reference_kernels(bool on) { flag().store(on, std::memory_order_relaxed); }

bool reference_kernels() { return flag().load(std::memory_order_relaxed); }

bool reference_kernels_by_default() { return TAPEGRAD_REFERENCE_KERNELS_BY_DEFAULT != 0; }

}  // namespace tg
