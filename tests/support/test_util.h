// tests/support/test_util.h — shared helpers for tapegrad's GoogleTest suites.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "core/core.h"
#include "ops/ops.h"

namespace tg::testing {

/// The kernel path a test asks for with a bool (tests/ops/fast/ run both, ops/kernels.h):
/// reference = true is the reference kernels, false the fast ones.
inline KernelPath kernels_for(bool reference) {
  return reference ? KernelPath::kReference : KernelPath::kFast;
}

/// Every dtype, for tests that loop over them.
inline constexpr DType kAllDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kBool};

/// Every element of `t` as a double, in row-major order, whatever its dtype.
inline std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out;
  visit_dtype(t.dtype(), [&]<class T>() {
    for (const T& v : t.to_vector<T>()) out.push_back(convert<double>(v));
  });
  return out;
}

/// A float64 leaf of standard normals that requires grad.
inline Tensor leaf(const Shape& shape, Generator& gen) {
  return randn(shape, kFloat64, gen).requires_grad_();
}

/// A non-contiguous float64 leaf: randn(shape) with dims d0 and d1 swapped.
inline Tensor swapped_leaf(const Shape& shape, int64_t d0, int64_t d1, Generator& gen) {
  return randn(shape, kFloat64, gen).transpose(d0, d1).requires_grad_();
}

/// d(sum(grad_out * y))/dx, without touching .grad.
inline Tensor grad_of(const Tensor& y, const Tensor& x, const Tensor& grad_out) {
  return grad({y}, {x}, {grad_out})[0];
}

/// GoogleTest adapter for tg::gradcheck: EXPECT_TRUE(GradcheckPasses(fn, {x, w})) fails with
/// gradcheck's message (input, element, analytic and numeric values, tolerance).
inline ::testing::AssertionResult GradcheckPasses(
    const std::function<Tensor(const std::vector<Tensor>&)>& fn, const std::vector<Tensor>& inputs,
    const GradcheckOptions& options = {}) {
  const GradcheckResult r = gradcheck(fn, inputs, options);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

/// Matches an exception message that contains every one of `parts`.
template <class... Parts>
auto MessageHas(const Parts&... parts) {
  return ::testing::AllOf(::testing::HasSubstr(std::string(parts))...);
}

/// The name of the kind of tapegrad error `e` is ("ShapeError", ...).
inline const char* kind_of(const Error& e) {
  if (dynamic_cast<const ShapeError*>(&e)) return "ShapeError";
  if (dynamic_cast<const DTypeError*>(&e)) return "DTypeError";
  if (dynamic_cast<const IndexError*>(&e)) return "IndexError";
  if (dynamic_cast<const ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const MisuseError*>(&e)) return "MisuseError";
  if (dynamic_cast<const NotImplemented*>(&e)) return "NotImplemented";
  if (dynamic_cast<const DistributedError*>(&e)) return "DistributedError";
  return "Error";
}

/// `text` as a JSON string literal; a byte that is not part of valid UTF-8 is written as the
/// four characters \xNN.
inline std::string json_quoted(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // A lead byte 110xxxxx, 1110xxxx or 11110xxx and that many 10xxxxxx after it (C0, C1
      // and F5..FF never lead: they would spell too short a form or too large a code point).
      const size_t n = c < 0xc2 || c > 0xf4 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      bool valid = n > 0 && i + n <= text.size();
      for (size_t k = 1; valid && k < n; ++k)
        valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
      if (valid) {
        out += text.substr(i, n);
        i += n - 1;
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\\\x%02x", c);
        out += buf;
      }
    }
  }
  return out + '"';
}

/// Called by EXPECT_TG_THROW for every tapegrad error it sees. With the environment variable
/// TAPEGRAD_ERROR_LOG set to a directory, appends one JSON line per error to
/// <dir>/<pid>.jsonl: the test, the statement, the error's kind and its message. From those
/// scripts/error_table.sh writes the table of errors a user can meet, docs/errors.md.
inline void record_error(const char* statement, const char* file, int line, const Error& e) {
  static const char* dir = std::getenv("TAPEGRAD_ERROR_LOG");
  if (dir == nullptr || *dir == '\0') return;
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::ofstream log(std::string(dir) + "/" + std::to_string(::getpid()) + ".jsonl", std::ios::app);
  log << "{\"test\": "
      << json_quoted(test ? std::string(test->test_suite_name()) + "." + test->name() : "")
      << ", \"file\": " << json_quoted(file) << ", \"line\": " << line
      << ", \"statement\": " << json_quoted(statement) << ", \"kind\": " << json_quoted(kind_of(e))
      << ", \"message\": " << json_quoted(e.what()) << ", \"pid\": " << ::getpid() << "}\n";
}

}  // namespace tg::testing

/// EXPECT_GRADCHECK(fn, inputs[, options]): the backward of fn agrees with finite differences.
#define EXPECT_GRADCHECK(...) EXPECT_TRUE(::tg::testing::GradcheckPasses(__VA_ARGS__))

/// Asserts that `statement` throws tg::Kind (exactly that kind or a subclass) with a message
/// containing each of the strings that follow, e.g.
///   EXPECT_TG_THROW(x.view({5}), ShapeError, "view", "(2, 3)");
/// (Every error it sees is also offered to record_error, for docs/errors.md.)
#define EXPECT_TG_THROW(statement, Kind, ...)                                             \
  EXPECT_THAT(::std::function<void()>([&] {                                               \
                try {                                                                     \
                  (void)(statement);                                                      \
                } catch (const ::tg::Error& tg_error_) {                                  \
                  ::tg::testing::record_error(#statement, __FILE__, __LINE__, tg_error_); \
                  throw;                                                                  \
                }                                                                         \
              }),                                                                         \
              ::testing::ThrowsMessage<::tg::Kind>(::tg::testing::MessageHas(__VA_ARGS__)))
