// core/exercise_probe.cpp — recording which course exercises a process runs.
//
// Only a probe tree calls this (tools/student_tree --probe puts the call at the top of every
// exercise's code); the real sources never do. scripts/tie_exercises.sh runs each test of
// such a tree with TAPEGRAD_EXERCISE_PROBE set to a file of its own and reads back the ids.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include "core/error.h"

namespace tg::detail {

void exercise_reached(const char* id) {
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
