// tests/core/small_vector_test.cpp — the inline vector the tape keeps its short lists in.
#include <memory>
#include <string>

#include "core/small_vector.h"
#include "test_util.h"

namespace {

using tg::SmallVector;

TEST(SmallVectorTest, StaysInlineUpToItsCapacityThenSpills) {
  SmallVector<int, 3> v;
  for (int i = 0; i < 3; ++i) v.push_back(i);
  EXPECT_FALSE(v.on_heap());
  v.push_back(3);
  EXPECT_TRUE(v.on_heap());
  ASSERT_EQ(v.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v[i], i);
}

TEST(SmallVectorTest, CopiesAndMovesKeepEveryElementOnceInlineAndSpilled) {
  // shared_ptr use counts reveal a lost or doubled element.
  auto item = std::make_shared<int>(7);
  for (size_t n : {1u, 2u, 5u}) {  // inline (capacity 2) and spilled
    {
      SmallVector<std::shared_ptr<int>, 2> a;
      for (size_t i = 0; i < n; ++i) a.push_back(item);
      SmallVector<std::shared_ptr<int>, 2> b = a;
      EXPECT_EQ(item.use_count(), static_cast<long>(1 + 2 * n)) << n;
      SmallVector<std::shared_ptr<int>, 2> c = std::move(a);
      EXPECT_TRUE(a.empty());  // NOLINT: moved-from is documented as empty
      EXPECT_EQ(item.use_count(), static_cast<long>(1 + 2 * n)) << n;
      SmallVector<std::shared_ptr<int>, 2> d;
      d.push_back(item);
      d = c;  // copy over a smaller one
      c = std::move(b);
      EXPECT_EQ(d.size(), n);
      EXPECT_EQ(c.size(), n);
      EXPECT_EQ(item.use_count(), static_cast<long>(1 + 2 * n)) << n;
    }
    EXPECT_EQ(item.use_count(), 1) << n;
  }
}

TEST(SmallVectorTest, PushingAnOwnElementWhileGrowingCopiesItBeforeMoving) {
  SmallVector<std::string, 1> v;
  v.push_back("a long string that does not fit the small-string buffer");
  v.push_back(v[0]);  // v grows: v[0] moves while being copied
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1], v[0]);
  EXPECT_EQ(v[1], "a long string that does not fit the small-string buffer");
}

TEST(SmallVectorTest, ResizeValueInitialisesAndClearDestroys) {
  SmallVector<int, 2> v{5, 6};
  v.resize(4);
  EXPECT_EQ(v[2], 0);
  EXPECT_EQ(v[3], 0);
  v.resize(1);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.back(), 5);
  v.pop_back();
  EXPECT_TRUE(v.empty());
  auto item = std::make_shared<int>(1);
  SmallVector<std::shared_ptr<int>, 1> w{item, item, item};
  w.clear();
  EXPECT_EQ(item.use_count(), 1);
  w.emplace_back(item);
  EXPECT_EQ(*w[0], 1);
}

}  // namespace
