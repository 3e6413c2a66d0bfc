// tests/core/recycling_allocator_test.cpp — per-thread free lists for the tape's objects.
#include <cstdint>
#include <thread>

#include "core/asan.h"
#include "core/recycling_allocator.h"
#include "test_util.h"

namespace {

using tg::detail::make_recycled;

struct Payload {
  int64_t values[10] = {};
};

TEST(RecyclingAllocatorTest, AFreedBlockIsReusedForTheNextObjectOfItsSize) {
  const void* first = make_recycled<Payload>().get();  // freed at the end of the statement
  const auto second = make_recycled<Payload>();
  EXPECT_EQ(second.get(), first);
  EXPECT_EQ(second->values[3], 0);  // constructed afresh
}

TEST(RecyclingAllocatorTest, ObjectsAreCacheLineAligned) {
  for (int i = 0; i < 3; ++i) {
    const auto p = make_recycled<Payload>();
    const auto t = make_recycled<tg::TensorImpl>();
    // The object sits after the reference counts, inside a 64-byte aligned block.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % alignof(Payload), 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.get()) % alignof(tg::TensorImpl), 0u);
  }
}

TEST(RecyclingAllocatorTest, ObjectsMayBeFreedOnAnotherThread) {
  // The block joins the freeing thread's list, which is drained when that thread exits.
  auto p = make_recycled<Payload>();
  p->values[0] = 42;
  std::thread([q = std::move(p)]() mutable {
    EXPECT_EQ(q->values[0], 42);
    q.reset();
    auto r = make_recycled<Payload>();  // may reuse it here
    EXPECT_EQ(r->values[0], 0);
  }).join();
  EXPECT_EQ(make_recycled<Payload>()->values[0], 0);
}

TEST(RecyclingAllocatorTest, TensorsAndNodesUseIt) {
  // Many recorded ops, freed together, then recorded again: the second round reuses the
  // first round's blocks (checked for correctness here, for speed by tapegrad-bench).
  tg::Tensor x = tg::tensor({1.0, 2.0}).requires_grad_();
  for (int round = 0; round < 2; ++round) {
    tg::Tensor y = x;
    for (int i = 0; i < 1000; ++i) y = y * 1.0;
    tg::sum(y).backward();
  }
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, 2}));
}

// Under AddressSanitizer a recycled block is poisoned while it waits on a free list, and so
// is the rounding slack of one in use (see storage_test.cpp for the same on Storage).
TEST(RecyclingAllocatorDeathTest, UseAfterFreeAndReadsPastTheObjectAreReported) {
  if (!tg::detail::kAsan) GTEST_SKIP() << "needs AddressSanitizer (the sanitize preset)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto live = make_recycled<Payload>();
  const volatile char* end = reinterpret_cast<const char*>(live.get()) + sizeof(Payload);
  (void)end[-1];
  EXPECT_DEATH((void)end[0], "use-after-poison");  // the block is 128 bytes, 96 in use
  const volatile int64_t* dead = make_recycled<Payload>()->values;  // freed to the list
  EXPECT_DEATH((void)dead[0], "use-after-poison");
}

}  // namespace
