// tests/core/shape_alloc_test.cpp — shapes of rank <= 8 never touch the heap.
//
// This binary replaces the global operator new with one that counts calls, so a test
// can assert that a block of code allocated nothing.
#include <cstdlib>
#include <new>

#include "test_util.h"

namespace {
long g_allocations = 0;
}

void* operator new(size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace {

template <class Fn>
long allocations_in(Fn&& fn) {
  const long before = g_allocations;
  fn();
  return g_allocations - before;
}

TEST(ShapeAllocTest, RankEightShapesStayInline) {
  int64_t numel = 0, stride0 = 0;
  bool grown_on_heap = true, broadcast_ok = false;
  const long n = allocations_in([&] {
    tg::Shape s{2, 3, 4, 5, 6, 7, 8, 9};
    tg::Shape copy = s;
    tg::Shape moved = std::move(copy);
    tg::Strides st = tg::contiguous_strides(moved);
    tg::Shape b = tg::broadcast_shapes(s, tg::Shape{1, 9});
    tg::Shape grown{1, 2, 3};
    for (int i = 0; i < 5; ++i) grown.push_back(i);
    grown.erase(0);
    grown.insert(0, 7);
    // Results leave the lambda first: a failing EXPECT would itself allocate.
    numel = tg::checked_numel(s, "test");
    stride0 = st[0];
    grown_on_heap = grown.on_heap();
    broadcast_ok = b == s;
  });
  EXPECT_EQ(n, 0);
  EXPECT_EQ(numel, 362880);  // 9! / 1
  EXPECT_EQ(stride0, 181440);
  EXPECT_FALSE(grown_on_heap);
  EXPECT_TRUE(broadcast_ok);
}

TEST(ShapeAllocTest, RankNineSpillsToTheHeap) {
  // Proves the counter sees allocations, so the test above can fail.
  tg::Shape s;
  const long n = allocations_in([&] {
    for (int i = 0; i < 9; ++i) s.push_back(1);
  });
  EXPECT_GE(n, 1);
  EXPECT_TRUE(s.on_heap());
  EXPECT_EQ(s.size(), 9u);
}

}  // namespace
