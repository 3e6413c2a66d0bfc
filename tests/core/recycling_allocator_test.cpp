// tests/core/recycling_allocator_test.cpp — per-thread free lists for the tape's objects.
#include <cstdint>
#include <thread>

#include "core/recycling_allocator.h"
#include "test_util.h"

namespace {

using tg::detail::make_recycled;

struct Payload {
  int64_t values[10] = {};
};

TEST(RecyclingAllocatorTest, AFreedBlockIsReusedForTheNextObjectOfItsSize) {
  if (!TG_RECYCLE_BLOCKS) GTEST_SKIP() << "off under AddressSanitizer";
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

}  // namespace
