// tests/core/tape_alloc_test.cpp — recording ops allocates nothing once the caches are warm.
//
// This binary replaces every form of the global operator new with one that counts calls
// (as shape_alloc_test does for shapes), so a test can count what a block of code
// allocates. Tensor memory itself comes from the storage cache (core/storage.cpp), tested
// in storage_test; here it is the tape's objects: nodes, TensorImpls, Storage headers and
// the lists inside them (core/recycling_allocator.h, core/small_vector.h).
#include <cstdlib>
#include <new>

#include "test_util.h"

namespace {
long g_allocations = 0;

void* counted(size_t n, size_t align) {
  ++g_allocations;
  const size_t rounded = (n + align - 1) / align * align;  // aligned_alloc wants a multiple
  if (void* p = std::aligned_alloc(align, rounded ? rounded : align)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) { return counted(n, alignof(std::max_align_t)); }
void* operator new[](size_t n) { return counted(n, alignof(std::max_align_t)); }
void* operator new(size_t n, std::align_val_t a) { return counted(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return counted(n, static_cast<size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

constexpr int kOps = 200;

// tapegrad-bench's overhead workload: a chain of tiny recorded ops.
tg::Tensor chain(const tg::Tensor& x) {
  tg::Tensor y = x;
  for (int i = 0; i < kOps / 2; ++i) y = tg::relu(y * 1.0001);
  return y;
}

TEST(TapeAllocTest, RecordingTinyOpsAllocatesNothingOnceWarm) {
  const tg::Tensor x = tg::tensor({1.0f, -2.0f, 3.0f, 0.5f}).requires_grad_();
  tg::sum(chain(x)).backward();  // warm-up: fills the free lists
  const long before = g_allocations;
  tg::Tensor y = chain(x);
  const long forward = g_allocations - before;
  EXPECT_EQ(forward, 0);
  tg::sum(y).backward();
}

TEST(TapeAllocTest, BackwardAllocatesOnlyTheListsOfTheFunctionApi) {
  const tg::Tensor x = tg::tensor({1.0f, -2.0f, 3.0f, 0.5f}).requires_grad_();
  tg::sum(chain(x)).backward();
  tg::Tensor loss = tg::sum(chain(x));
  const long before = g_allocations;
  loss.backward();
  const long backward = g_allocations - before;
  // What is left per op: the std::vector<Tensor> that every backward returns, and the one
  // saved_tensors() returns (both part of the Function API a learner writes against), plus
  // a few lists per backward pass in the engine.
  EXPECT_LE(backward, 2 * kOps + 20);
}

TEST(TapeAllocTest, TheCounterSeesAllocations) {
  // Proves the counter works, so the tests above can fail.
  const long before = g_allocations;
  auto p = std::make_unique<int>(1);
  EXPECT_EQ(g_allocations - before, 1);
}

}  // namespace
