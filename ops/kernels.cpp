// ops/kernels.cpp — the switch between the reference and the fast kernels.
#include "ops/kernels.h"

#include <atomic>
#include <cstdlib>
#include <string_view>

#include "core/error.h"

namespace tg {
namespace {

// The path before any call to set_kernel_path: TAPEGRAD_KERNELS, else fast where this build
// has fast kernels. Read once, on first use.
KernelPath from_environment() {
  const char* value = std::getenv("TAPEGRAD_KERNELS");
  const bool fast = fast_kernels_available();
  if (value == nullptr || *value == '\0') return fast ? KernelPath::kFast : KernelPath::kReference;
  const std::string_view v(value);
  TG_CHECK(v == "fast" || v == "reference", ValueError,
           "TAPEGRAD_KERNELS must be 'fast' or 'reference', got '{}'", v);
  TG_CHECK(v == "reference" || fast, MisuseError,
           "TAPEGRAD_KERNELS=fast, but this tree was built without the fast kernels (ops/fast/ "
           "is absent, as in a student tree); unset it or set it to 'reference'");
  return v == "fast" ? KernelPath::kFast : KernelPath::kReference;
}

std::atomic<KernelPath>& current() {
  static std::atomic<KernelPath> path{from_environment()};
  return path;
}

// The fast kernels are in their pairs from the start of the program on.
[[maybe_unused]] const bool g_installed_at_start = fast_kernels_available();

}  // namespace

bool fast_kernels_available() {
  static const bool installed = detail::install_fast_kernels();
  return installed;
}

KernelPath kernel_path() { return current().load(std::memory_order_relaxed); }

void set_kernel_path(KernelPath path) {
  TG_CHECK(path == KernelPath::kReference || fast_kernels_available(), MisuseError,
           "set_kernel_path(fast): this tree was built without the fast kernels (ops/fast/ is "
           "absent, as in a student tree); only the reference kernels can run");
  current().store(path, std::memory_order_relaxed);
}

const char* kernel_path_name(KernelPath path) {
  return path == KernelPath::kFast ? "fast" : "reference";
}

}  // namespace tg
