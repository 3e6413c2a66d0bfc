// tests/core/storage_test.cpp — aligned, shared storage.
#include <cstdint>

#include "test_util.h"

namespace {

TEST(StorageTest, EveryAllocationIsCacheLineAligned) {
  for (size_t n : {0, 1, 63, 64, 65, 1000, 4096}) {
    tg::Storage s(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data()) % 64, 0u) << n;
    EXPECT_EQ(s.nbytes(), n);
    EXPECT_NE(s.data(), nullptr);
  }
}

TEST(StorageTest, ImpossibleAllocationsThrowInsteadOfCrashing) {
  EXPECT_TG_THROW(tg::Storage(SIZE_MAX), ValueError, "Storage", "too large");
  EXPECT_TG_THROW(tg::Storage(size_t{1} << 62), ValueError, "Storage", "out of memory");
}

TEST(StorageTest, ViewsKeepTheStorageAlive) {
  tg::Tensor view;
  {
    tg::Tensor base = tg::arange(6.0).view({2, 3});
    view = base.select(0, 1);
  }
  EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(view.storage().use_count(), 1);
}

}  // namespace
