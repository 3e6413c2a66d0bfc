// ops/reference_kernels.cpp — the global switch, read once from the environment.
#include "ops/reference_kernels.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace tg {
namespace {

bool from_environment() {
  const char* value = std::getenv("TAPEGRAD_REFERENCE_KERNELS");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

std::atomic<bool>& flag() {
  static std::atomic<bool> on{from_environment()};
  return on;
}

}  // namespace

void set_reference_kernels(bool on) { flag().store(on, std::memory_order_relaxed); }

bool reference_kernels() { return flag().load(std::memory_order_relaxed); }

}  // namespace tg
