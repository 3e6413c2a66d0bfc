// core/error.h — the one exception hierarchy of tapegrad, and the check macro.
//
// Every piece of user input is validated by TG_CHECK, which stays on in Release
// builds (unlike assert). A failed check throws a tg::Error subclass whose message
// starts with the op's name and carries the actual shapes, dtypes or values:
//
//   TG_CHECK(a.dim() == 2, ShapeError, "mm: expected a 2-D tensor, got shape {}", a.shape());
//   -> tg::ShapeError("mm: expected a 2-D tensor, got shape (2, 3, 4)")
//
// Catch tg::Error to catch everything tapegrad throws; catch a kind to react to it.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace tg {

/// Base of everything tapegrad throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Shapes that do not fit: wrong rank, incompatible sizes, non-broadcastable.
class ShapeError : public Error {
  using Error::Error;
};
/// A dtype the op does not accept, or two that disagree.
class DTypeError : public Error {
  using Error::Error;
};
/// An index or dim outside its valid range.
class IndexError : public Error {
  using Error::Error;
};
/// A value outside its domain (a probability of 1.5, a step of 0, too many bytes).
class ValueError : public Error {
  using Error::Error;
};
/// The API used in a way it does not support; the message hints at the fix.
class MisuseError : public Error {
  using Error::Error;
};

/// A collective of a data-parallel run failed: the other ranks did not answer in time, or MPI
/// reported an error (nn/distributed/process_group.h).
class DistributedError : public Error {
  using Error::Error;
};

/// Code a learner has yet to write: the body of a course exercise, blanked in a student tree
/// (tools/student_tree.cpp, tools/exercise_hooks.h). The message names the exercise and the
/// chapter that teaches it.
class NotImplemented : public Error {
  using Error::Error;
};

namespace detail {
template <class Kind, class... Args>
[[noreturn]] void raise(fmt::format_string<Args...> format, Args&&... args) {
  throw Kind(fmt::format(format, std::forward<Args>(args)...));
}
}  // namespace detail

}  // namespace tg

/// Always-on check: if `cond` is false, throw tg::Kind with a fmt-formatted message.
#define TG_CHECK(cond, Kind, ...)                   \
  do {                                              \
    if (!(cond)) [[unlikely]] {                     \
      ::tg::detail::raise<::tg::Kind>(__VA_ARGS__); \
    }                                               \
  } while (false)
