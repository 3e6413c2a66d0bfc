// tools/student_tree.cpp — writes a student's copy of the repository: the same tree with
// the body of every course exercise (or of every one from a chosen exercise on) replaced
// by a call that throws tg::NotImplemented (tools/exercise_markers.h says how).
//
//   build/bin/student_tree DEST                      # every exercise blanked
//   build/bin/student_tree DEST --from rms_norm.backward
//   build/bin/student_tree DEST --source /path/to/tapegrad
//   build/bin/student_tree DEST --probe              # nothing blanked; records instead
//
// --probe writes a tree for scripts/tie_exercises.sh instead: every exercise keeps its
// solution, with a call in front that records the exercise's id when a test runs it.
//
// It copies every file of the source tree except version control, build and run
// directories (.git, build*, runs, .cache), blanks the marked .h and .cpp files, checks
// that every exercise of tools/exercises.txt is marked somewhere, and refuses to write
// into a DEST that exists and is not empty.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "tools/exercise_markers.h"

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  TG_CHECK(out.good(), ValueError, "student_tree: cannot write {}", path.string());
}

/// Directories that are not part of the source: version control, builds, run outputs.
bool skipped(const fs::path& name) {
  const std::string n = name.string();
  return n == ".git" || n == "runs" || n == ".cache" || n.starts_with("build");
}

bool is_source(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".h" || ext == ".cpp";
}

}  // namespace

int main(int argc, char** argv) {
  std::string dest, from, source = TAPEGRAD_SOURCE_DIR;
  CLI::App app{"student_tree: the repository with the course's exercises blanked"};
  app.add_option("dest", dest, "directory to write (must not exist, or be empty)")->required();
  app.add_option("--from", from, "blank this exercise and the ones after it (default: all)");
  app.add_option("--source", source, "the tapegrad tree to copy")->capture_default_str();
  bool probe = false;
  app.add_flag("--probe", probe, "keep every solution and record which exercises tests run")
      ->excludes("--from");
  CLI11_PARSE(app, argc, argv);
  try {
    const fs::path src(source), out(dest);
    TG_CHECK(!fs::exists(out) || fs::is_empty(out), ValueError,
             "student_tree: {} exists and is not empty; choose a new directory", dest);
    const std::vector<tg::tools::Exercise> course =
        tg::tools::parse_registry(tg::tools::read_file(src / "tools" / "exercises.txt"));
    const std::set<std::string> blank = tg::tools::exercises_from(course, from);
    std::set<std::string> marked;
    size_t files = 0;
    for (auto it = fs::recursive_directory_iterator(src); it != fs::recursive_directory_iterator();
         ++it) {
      if (it->is_directory() && skipped(it->path().filename())) {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file()) continue;
      const fs::path rel = fs::relative(it->path(), src);
      std::string text = tg::tools::read_file(it->path());
      if (is_source(rel)) {
        std::vector<std::string> found;
        text = probe ? tg::tools::probe_exercises(text, rel.string(), course, &found)
                     : tg::tools::blank_exercises(text, rel.string(), course, blank, &found);
        marked.insert(found.begin(), found.end());
      }
      write_file(out / rel, text);
      fs::permissions(out / rel, fs::status(it->path()).permissions());
      ++files;
    }
    // The exercises are the plain kernels: the tree runs on them by default (ops/CMakeLists.txt).
    write_file(out / "tools" / "STUDENT_TREE",
               std::string(probe ? "A probe tree" : "A student tree") +
                   ", written by tools/student_tree" +
                   (probe          ? " --probe"
                    : from.empty() ? std::string()
                                   : " --from " + from) +
                   ". ops/CMakeLists.txt sees this file and makes the plain reference kernels\n"
                   "the default (TAPEGRAD_REFERENCE_KERNELS=0 turns them off).\n");
    for (const tg::tools::Exercise& e : course) {
      TG_CHECK(marked.count(e.id) > 0, ValueError,
               "student_tree: exercise {} is listed in tools/exercises.txt but marked nowhere",
               e.id);
    }
    if (probe) {
      fmt::print("student_tree: {} files into {}; all {} exercises probed\n", files, dest,
                 course.size());
    } else {
      fmt::print("student_tree: {} files into {}; {} of {} exercises blanked{}\n", files, dest,
                 blank.size(), course.size(), from.empty() ? "" : " (from " + from + ")");
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
