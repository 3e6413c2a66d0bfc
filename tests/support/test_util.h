// tests/support/test_util.h — shared helpers for tapegrad's GoogleTest suites.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/core.h"

namespace tg::testing {

/// Matches an exception message that contains every one of `parts`.
template <class... Parts>
auto MessageHas(const Parts&... parts) {
  return ::testing::AllOf(::testing::HasSubstr(std::string(parts))...);
}

}  // namespace tg::testing

/// Asserts that `statement` throws tg::Kind (exactly that kind or a subclass) with a message
/// containing each of the strings that follow, e.g.
///   EXPECT_TG_THROW(x.view({5}), ShapeError, "view", "(2, 3)");
#define EXPECT_TG_THROW(statement, Kind, ...) \
  EXPECT_THAT([&] { (void)(statement); },     \
              ::testing::ThrowsMessage<::tg::Kind>(::tg::testing::MessageHas(__VA_ARGS__)))
