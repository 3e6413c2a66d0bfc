// tools/exercise_hooks.h — the two calls the course's generated trees put inside an
// exercise's fence (tools/exercise_markers.h). The real sources never call them: the
// generator adds this include to each file whose fences it fills.
//
//   student tree (student_tree DEST):          exercise_not_implemented(id, chapter)
//   probe tree   (student_tree DEST --probe):  exercise_reached(id), then the solution
#pragma once

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "core/error.h"

namespace tg::detail {

/// The Chinese twin of an English chapter: docs/course/06-rms-norm.md ->
/// docs/course/zh/06-rms-norm.md (the course keeps both trees file for file).
inline std::string chinese_chapter(std::string_view chapter) {
  constexpr std::string_view kCourse = "docs/course/";
  if (!chapter.starts_with(kCourse)) return std::string(chapter);
  return std::string(kCourse) + "zh/" + std::string(chapter.substr(kCourse.size()));
}

/// A blanked exercise body: throws tg::NotImplemented, naming the chapter in both languages:
/// "exercise rms_norm.backward is not implemented yet — see docs/course/06-rms-norm.md
/// (中文: docs/course/zh/06-rms-norm.md)".
[[noreturn]] inline void exercise_not_implemented(const char* id, const char* chapter) {
  throw NotImplemented(fmt::format("exercise {} is not implemented yet — see {} (中文: {})", id,
                                   chapter, chinese_chapter(chapter)));
}

/// A probed exercise body's first line: when the environment variable
/// TAPEGRAD_EXERCISE_PROBE names a file, appends the id to it as a line, once per process.
/// scripts/tie_exercises.sh runs each test of a probe tree with a file of its own and reads
/// back which exercises the test ran (tests/exercise_ties.txt).
inline void exercise_reached(const char* id) {
  static const char* const path = std::getenv("TAPEGRAD_EXERCISE_PROBE");
  if (path == nullptr || *path == '\0') return;
  static std::mutex mutex;  // kernels may run on several threads
  static std::set<std::string> seen;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!seen.insert(id).second) return;
  // Append mode: the processes of one test (a test may run an example program) share the file.
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", id);
    std::fclose(f);
  }
}

}  // namespace tg::detail
