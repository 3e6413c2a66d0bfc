// tests/core/storage_test.cpp — aligned, shared storage, and the cache of freed blocks.
#include <cstdint>

#include "core/asan.h"

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

TEST(StorageTest, AFreedBlockIsReusedForTheSameSizeOnly) {
  const std::byte* freed = tg::Storage(1000).data();  // destroyed at the end of the statement
  EXPECT_GE(tg::storage_cache_bytes(), 1000u);
  tg::Storage other_size(2000);
  EXPECT_NE(other_size.data(), freed);
  tg::Storage same_size(1000);
  EXPECT_EQ(same_size.data(), freed);
  EXPECT_EQ(same_size.nbytes(), 1000u);
}

TEST(StorageTest, EmptyingTheCacheReturnsEveryFreedBlock) {
  { tg::Tensor big = tg::zeros({1000, 100}); }  // 400 kB, freed into the cache
  EXPECT_EQ(tg::storage_cache_bytes() >= 400000u, tg::storage_cache_enabled());
  tg::empty_storage_cache();
  EXPECT_EQ(tg::storage_cache_bytes(), 0u);
  // Tensors made afterwards are as usable as ever.
  EXPECT_EQ(tg::ones({3}).to_vector<float>(), (std::vector<float>{1, 1, 1}));
}

// Under AddressSanitizer (the sanitize preset) the cache and the rounding slack are
// poisoned, so these two mistakes, which a caching allocator would hide from ASan, are
// reported. Elsewhere the tests are skipped: there is nothing to report them.
TEST(StorageDeathTest, ReadingPastTheEndInsideTheRoundingIsReported) {
  if (!tg::detail::kAsan) GTEST_SKIP() << "needs AddressSanitizer (the sanitize preset)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  tg::Storage s(10);  // a block of 64 bytes, 10 of them in use
  const volatile std::byte* p = s.data();
  (void)p[9];
  EXPECT_DEATH((void)p[10], "use-after-poison");
}

TEST(StorageDeathTest, ReadingABlockInTheCacheIsReported) {
  if (!tg::detail::kAsan) GTEST_SKIP() << "needs AddressSanitizer (the sanitize preset)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const volatile std::byte* freed = tg::Storage(1000).data();  // now in the cache
  EXPECT_DEATH((void)freed[0], "use-after-poison");
  tg::Storage same_size(1000);  // taken from the cache: usable again
  EXPECT_EQ(same_size.data(), freed);
  const volatile std::byte* p = same_size.data();
  (void)p[999];
}

}  // namespace
