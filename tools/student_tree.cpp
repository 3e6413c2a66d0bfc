// tools/student_tree.cpp — writes a student's copy of the repository: the same tree with
// the body of every course exercise (or of every one from a chosen exercise on) replaced
// by a call that throws tg::NotImplemented (tools/exercise_markers.h says how).
//
//   build/bin/student_tree DEST                      # every exercise blanked
//   build/bin/student_tree DEST --from rms_norm.backward
//   build/bin/student_tree DEST --source /path/to/tapegrad
//   build/bin/student_tree DEST --probe              # nothing blanked; records instead
//   build/bin/student_tree DEST --no-git             # no repository (see below)
//
// A student tree is a git repository with one commit, the tree as handed out, so that a
// learner can see what they changed (`git diff`), keep their steps, and start an exercise
// over (`git checkout -- ops/rms_norm.cpp`). Without git on the machine it says so and
// writes the tree alone.
//
// --probe writes a tree for scripts/tie_exercises.sh instead: every exercise keeps its
// solution, with a call in front that records the exercise's id when a test runs it.
//
// It copies every file of the source tree except version control, build and run
// directories (.git, build*, runs, .cache) and the fast kernels with their tests (ops/fast,
// nn/fast, tests/ops/fast, tests/nn/fast: a student tree runs the reference kernels, and a
// fast kernel would hand over the answer), blanks the marked .h and .cpp files, checks that
// every exercise of tools/exercises.txt is marked somewhere, and refuses to write into a
// DEST that exists and is not empty. A probe tree leaves out the same folders, so that the
// ties it finds are those of a student tree.
//
// Last, it checks the tree it wrote holds no answer: no line of a blanked solution body
// (tools/exercise_markers.h: collect_answer_lines) may appear in any file of it, code,
// comment or course text. If one does, it names the file and line and exits with 1.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <cstdlib>
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

/// Directories a generated tree leaves out: version control, builds, run outputs, and the
/// fast kernels with their tests. `rel` is the path from the source tree's root.
bool skipped(const fs::path& rel) {
  const std::string n = rel.filename().string(), r = rel.generic_string();
  return n == ".git" || n == "runs" || n == ".cache" || n.starts_with("build") || r == "ops/fast" ||
         r == "nn/fast" || r == "tests/ops/fast" || r == "tests/nn/fast";
}

/// `s` quoted for the shell: between single quotes, each ' written as '\''.
std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Makes `dir` a git repository whose first commit is the whole tree (its .gitignore keeps
/// build/ out). False, with a note, when git is not installed; throws if git fails.
bool commit_tree(const std::string& dir, const std::string& message) {
  if (std::system("command -v git >/dev/null 2>&1") != 0) {
    fmt::print("student_tree: git is not installed, so {} is not a repository\n", dir);
    return false;
  }
  const std::string git = "git -C " + shell_quoted(dir);
  // The identity and the no-signing rule are for this commit only: a learner's own
  // settings may lack a name, or ask for a signature this machine cannot make.
  const std::string command =
      git + " init -q && " + git + " add -A && " + git +
      " -c user.name='tapegrad course' -c user.email=course@tapegrad.invalid"
      " -c commit.gpgsign=false commit -q --no-verify -m " +
      shell_quoted(message);
  TG_CHECK(std::system(command.c_str()) == 0, ValueError,
           "student_tree: git could not make the first commit in {}", dir);
  return true;
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
  bool probe = false, git = true;
  app.add_flag("!--no-git", git, "do not make the tree a git repository");
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
    std::map<std::string, std::set<std::string>> answers;      // exercise -> its solution's lines
    std::vector<std::pair<std::string, std::string>> written;  // (path, text) of every file
    for (auto it = fs::recursive_directory_iterator(src); it != fs::recursive_directory_iterator();
         ++it) {
      const fs::path rel = fs::relative(it->path(), src);
      if (it->is_directory() && skipped(rel)) {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file()) continue;
      std::string text = tg::tools::read_file(it->path());
      if (is_source(rel)) {
        std::vector<std::string> found;
        tg::tools::collect_answer_lines(text, rel.string(), course, &answers);
        text = probe ? tg::tools::probe_exercises(text, rel.string(), course, &found)
                     : tg::tools::blank_exercises(text, rel.string(), course, blank, &found);
        marked.insert(found.begin(), found.end());
      }
      write_file(out / rel, text);
      fs::permissions(out / rel, fs::status(it->path()).permissions());
      written.emplace_back(rel.generic_string(), std::move(text));
    }
    const size_t files = written.size();
    write_file(out / "tools" / "STUDENT_TREE",
               std::string(probe ? "A probe tree" : "A student tree") +
                   ", written by tools/student_tree" +
                   (probe          ? " --probe"
                    : from.empty() ? std::string()
                                   : " --from " + from) +
                   ". It has no ops/fast/ or nn/fast/: every op runs its reference kernel\n"
                   "(ops/kernels.h), the code the exercises are about.\n");
    for (const tg::tools::Exercise& e : course) {
      TG_CHECK(marked.count(e.id) > 0, ValueError,
               "student_tree: exercise {} is listed in tools/exercises.txt but marked nowhere",
               e.id);
    }
    if (!probe) {
      std::vector<std::string> leaks;
      for (const auto& [path, text] : written) {
        for (std::string& hit : tg::tools::find_answers(text, path, answers, blank)) {
          leaks.push_back(std::move(hit));
        }
      }
      for (const std::string& leak : leaks) fmt::print(stderr, "{}\n", leak);
      TG_CHECK(leaks.empty(), ValueError,
               "student_tree: {} line(s) of blanked solutions are still in the tree (listed "
               "above): move them out of the fences' neighbourhood or reword them",
               leaks.size());
    }
    if (probe) {
      fmt::print("student_tree: {} files into {}; all {} exercises probed\n", files, dest,
                 course.size());
    } else {
      if (git) {
        commit_tree(dest, fmt::format("The course as handed out: {} of {} exercises blanked",
                                      blank.size(), course.size()));
      }
      fmt::print("student_tree: {} files into {}; {} of {} exercises blanked{}\n", files, dest,
                 blank.size(), course.size(), from.empty() ? "" : " (from " + from + ")");
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
