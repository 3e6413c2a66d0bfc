// tests/core/error_test.cpp — the exception hierarchy and the TG_CHECK macro.
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "test_util.h"

namespace tg {
namespace {

using ::testing::HasSubstr;

// ---- the hierarchy

static_assert(std::is_base_of_v<std::runtime_error, Error>);
static_assert(std::is_base_of_v<Error, ShapeError>);
static_assert(std::is_base_of_v<Error, DTypeError>);
static_assert(std::is_base_of_v<Error, IndexError>);
static_assert(std::is_base_of_v<Error, ValueError>);
static_assert(std::is_base_of_v<Error, MisuseError>);
// The kinds are siblings: catching one never catches another.
static_assert(!std::is_base_of_v<ShapeError, IndexError>);
static_assert(!std::is_base_of_v<IndexError, ShapeError>);
static_assert(!std::is_base_of_v<ValueError, DTypeError>);
static_assert(!std::is_base_of_v<MisuseError, ValueError>);

// Kind thrown and caught as each of its bases keeps its message.
template <class Kind>
void expect_kind_is_caught_as_error_and_runtime_error(const char* name) {
  SCOPED_TRACE(name);
  try {
    throw Kind("op: message");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "op: message");
  }
  try {
    throw Kind("op: message");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "op: message");
  }
  try {
    throw Kind("op: message");
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "op: message");
  }
}

TEST(ErrorTest, EveryKindIsCaughtAsErrorAndRuntimeError) {
  expect_kind_is_caught_as_error_and_runtime_error<ShapeError>("ShapeError");
  expect_kind_is_caught_as_error_and_runtime_error<DTypeError>("DTypeError");
  expect_kind_is_caught_as_error_and_runtime_error<IndexError>("IndexError");
  expect_kind_is_caught_as_error_and_runtime_error<ValueError>("ValueError");
  expect_kind_is_caught_as_error_and_runtime_error<MisuseError>("MisuseError");
}

// ---- TG_CHECK

// The dynamic type of what `fn` throws ("nothing" if it returns).
template <class Fn>
std::string thrown_type(Fn fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return typeid(e).name();
  }
  return "nothing";
}

TEST(ErrorTest, FailedCheckThrowsExactlyTheNamedKind) {
  // The dynamic type, not merely something catchable as the kind.
  EXPECT_EQ(thrown_type([] { TG_CHECK(false, ShapeError, "s"); }), typeid(ShapeError).name());
  EXPECT_EQ(thrown_type([] { TG_CHECK(false, DTypeError, "d"); }), typeid(DTypeError).name());
  EXPECT_EQ(thrown_type([] { TG_CHECK(false, IndexError, "i"); }), typeid(IndexError).name());
  EXPECT_EQ(thrown_type([] { TG_CHECK(false, ValueError, "v"); }), typeid(ValueError).name());
  EXPECT_EQ(thrown_type([] { TG_CHECK(false, MisuseError, "m"); }), typeid(MisuseError).name());
  EXPECT_EQ(thrown_type([] { TG_CHECK(false, Error, "e"); }), typeid(Error).name());
  EXPECT_EQ(thrown_type([] { TG_CHECK(true, Error, "e"); }), "nothing");
}

TEST(ErrorTest, FailedCheckIsCaughtAsErrorAndRuntimeError) {
  EXPECT_THROW(TG_CHECK(false, ShapeError, "s"), Error);
  EXPECT_THROW(TG_CHECK(false, DTypeError, "d"), Error);
  EXPECT_THROW(TG_CHECK(false, IndexError, "i"), Error);
  EXPECT_THROW(TG_CHECK(false, ValueError, "v"), Error);
  EXPECT_THROW(TG_CHECK(false, MisuseError, "m"), std::runtime_error);
  EXPECT_THROW(TG_CHECK(false, ShapeError, "s"), std::runtime_error);
}

TEST(ErrorTest, FailedCheckIsNotCaughtAsASiblingKind) {
  bool caught_as_sibling = false, caught_as_kind = false;
  try {
    try {
      TG_CHECK(1 + 1 == 3, IndexError, "index");
    } catch (const ShapeError&) {
      caught_as_sibling = true;
    } catch (const ValueError&) {
      caught_as_sibling = true;
    }
  } catch (const IndexError&) {
    caught_as_kind = true;
  }
  EXPECT_FALSE(caught_as_sibling);
  EXPECT_TRUE(caught_as_kind);
}

TEST(ErrorTest, PassingCheckDoesNotThrow) {
  EXPECT_NO_THROW(TG_CHECK(true, ShapeError, "never"));
  EXPECT_NO_THROW(TG_CHECK(2 > 1, ValueError, "never {}", 1));
}

TEST(ErrorTest, MessageIsFmtFormattedWithTheValues) {
  const Shape a{2, 3}, b{4};
  EXPECT_TG_THROW(
      [&] {
        TG_CHECK(a == b, ShapeError, "mm: shapes {} and {} differ ({} vs {})", a, b, a.size(),
                 b.size());
      }(),
      ShapeError, "mm: shapes (2, 3) and (4) differ (2 vs 1)");
  EXPECT_TG_THROW([&] { TG_CHECK(false, DTypeError, "cat: {} vs {}", kFloat16, kInt64); }(),
                  DTypeError, "cat: float16 vs int64");
  EXPECT_TG_THROW([&] { TG_CHECK(false, ValueError, "dropout: p = {:.2f} not in [0, 1)", 1.5); }(),
                  ValueError, "dropout: p = 1.50 not in [0, 1)");
  EXPECT_TG_THROW([&] { TG_CHECK(false, IndexError, "{}: index {} out of range", "gather", -7); }(),
                  IndexError, "gather: index -7 out of range");
}

TEST(ErrorTest, MessageIsExactlyTheFormattedText) {
  try {
    TG_CHECK(false, MisuseError, "backward: called twice on {}; pass retain_graph={}", "loss",
             true);
    FAIL() << "TG_CHECK(false, ...) did not throw";
  } catch (const MisuseError& e) {
    EXPECT_STREQ(e.what(), "backward: called twice on loss; pass retain_graph=true");
  }
}

TEST(ErrorTest, MessageWithoutArgumentsKeepsBraces) {
  // "{{" is fmt's escaped brace; a message with no placeholders is printed as is.
  EXPECT_TG_THROW([&] { TG_CHECK(false, ValueError, "set {{a, b}} is empty"); }(), ValueError,
                  "set {a, b} is empty");
}

TEST(ErrorTest, ConditionIsEvaluatedExactlyOnce) {
  int calls = 0;
  auto cond = [&](bool value) {
    ++calls;
    return value;
  };
  TG_CHECK(cond(true), ValueError, "x");
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(TG_CHECK(cond(false), ValueError, "x"), ValueError);
  EXPECT_EQ(calls, 2);
}

TEST(ErrorTest, PassingCheckDoesNotEvaluateTheMessageArguments) {
  int evaluated = 0;
  auto expensive = [&] {
    ++evaluated;
    return std::string("costly");
  };
  for (int i = 0; i < 3; ++i) TG_CHECK(i < 3, ShapeError, "never built: {}", expensive());
  EXPECT_EQ(evaluated, 0);
  EXPECT_THROW(TG_CHECK(false, ShapeError, "built: {}", expensive()), ShapeError);
  EXPECT_EQ(evaluated, 1);
}

TEST(ErrorTest, FailedCheckEvaluatesEachMessageArgumentOnce) {
  int counter = 0;
  auto next = [&] { return ++counter; };
  EXPECT_TG_THROW([&] { TG_CHECK(false, ValueError, "got {} then {}", next(), 10 * next()); }(),
                  ValueError, "got ");
  EXPECT_EQ(counter, 2);  // each argument once, whatever order the compiler picks
}

TEST(ErrorTest, CheckIsOneStatementInsideIfElse) {
  // The do/while(false) wrapper makes the macro safe in an unbraced if/else.
  int branch = 0;
  if (branch == 0) TG_CHECK(true, ValueError, "x");
  else branch = 2;
  EXPECT_EQ(branch, 0);
}

TEST(ErrorTest, ErrorsFromTheLibraryCarryOpAndValues) {
  // A sample of real checks: each is a tg::Error subclass with a useful message.
  try {
    zeros({2, 3}).view({4});
    FAIL() << "view did not throw";
  } catch (const Error& e) {
    EXPECT_NE(dynamic_cast<const ShapeError*>(&e), nullptr);
    EXPECT_THAT(e.what(), HasSubstr("view"));
    EXPECT_THAT(e.what(), HasSubstr("(4)"));
  }
  EXPECT_TG_THROW(zeros({2}, kInt64).requires_grad_(), DTypeError, "requires_grad_", "int64");
  EXPECT_TG_THROW(zeros({2}).at<float>({5}), IndexError, "at", "index 5", "size 2");
}

}  // namespace
}  // namespace tg
