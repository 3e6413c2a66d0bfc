// tests/ops/kernels_test.cpp — the switch between the reference and the fast kernels
// (ops/kernels.h): where it starts, the guard, and a tree without fast kernels.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "test_util.h"

namespace tg {
namespace {

TEST(KernelSwitch, StartsFromTheEnvironment) {
  // CTest runs the ops and nn tests a second time ("*.reference") with
  // TAPEGRAD_KERNELS=reference and the argument --tapegrad_expect_reference_kernels: there the
  // switch must say reference, which proves the environment reached the tests. Unset, the
  // default holds: fast where this tree has fast kernels, reference in a student tree.
  EXPECT_EQ(fast_kernels_available(), TAPEGRAD_EXPECT_FAST_KERNELS != 0);
  const char* value = std::getenv("TAPEGRAD_KERNELS");
  const KernelPath expected =
      value != nullptr ? (std::string(value) == "fast" ? KernelPath::kFast : KernelPath::kReference)
      : fast_kernels_available() ? KernelPath::kFast
                                 : KernelPath::kReference;
  EXPECT_EQ(kernel_path(), expected) << "TAPEGRAD_KERNELS=" << (value ? value : "");
  const std::vector<std::string> args = ::testing::internal::GetArgvs();
  if (std::find(args.begin(), args.end(), "--tapegrad_expect_reference_kernels") != args.end()) {
    EXPECT_EQ(kernel_path(), KernelPath::kReference)
        << "the .reference run did not get TAPEGRAD_KERNELS=reference";
  }
}

TEST(KernelSwitch, TheGuardSetsAndRestores) {
  const KernelPath before = kernel_path();
  {
    KernelPathGuard reference(KernelPath::kReference);
    EXPECT_EQ(kernel_path(), KernelPath::kReference);
  }
  EXPECT_EQ(kernel_path(), before);
  EXPECT_STREQ(kernel_path_name(KernelPath::kReference), "reference");
  EXPECT_STREQ(kernel_path_name(KernelPath::kFast), "fast");
}

TEST(KernelSwitch, APairRunsItsFastKernelOnlyOnTheFastPath) {
  const auto& pair = kernels::relu_forward.of<float>();
  KernelPathGuard reference(KernelPath::kReference);
  EXPECT_EQ(pair.get(), pair.reference());
  if (!fast_kernels_available()) {
    // A student tree: no fast kernel to choose, and asking for one is a clear error.
    EXPECT_EQ(pair.fast(), nullptr);
    EXPECT_TG_THROW(set_kernel_path(KernelPath::kFast), MisuseError, "set_kernel_path(fast)",
                    "without the fast kernels");
    return;
  }
  ASSERT_NE(pair.fast(), nullptr);
  EXPECT_NE(pair.fast(), pair.reference());
  KernelPathGuard fast(KernelPath::kFast);
  EXPECT_EQ(pair.get(), pair.fast());
}

}  // namespace
}  // namespace tg
