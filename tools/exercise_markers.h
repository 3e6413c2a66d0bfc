// tools/exercise_markers.h — the course's exercises, marked in the real sources, and the
// blanking that turns the sources into a student's skeleton (tools/student_tree.cpp).
//
// An exercise is a piece of the real code fenced by two comment lines naming it:
//
//   void rms_norm_backward(...) {
//     // exercise rms_norm.backward: begin
//     ... the solution ...
//     // exercise rms_norm.backward: end
//   }
//
// tools/exercises.txt lists every exercise once, in the order of the course, with the
// chapter that teaches it:
//
//   rms_norm.backward  docs/course/06-rms-norm.md
//
// Blanking keeps both marker lines and replaces what is between them with one call that
// throws tg::NotImplemented naming the exercise and its chapter (tools/exercise_hooks.h),
// indented like the begin marker, and includes that header before the file's first
// #include. The fenced code must therefore be a whole function body or the
// tail of one (nothing after the end marker may use what the body declared): a throw is a
// valid body for any return type. Everything outside the markers is kept byte for byte.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tg::tools {

/// The line a filled file gets, before its first #include (or at its top).
inline constexpr std::string_view kHooksInclude = "#include \"tools/exercise_hooks.h\"";

// ---- text helpers shared by the course's tools

/// The lines of `text`, each without its '\n' (a last line without one is still a line).
std::vector<std::string_view> lines_of(std::string_view text);

/// `s` without the spaces, tabs and '\r' around it.
std::string_view trimmed(std::string_view s);

/// The whole file at `path`; throws tg::ValueError naming it when it cannot be read.
std::string read_file(const std::string& path);

// ---- the registry and the markers

struct Exercise {
  std::string id;       // "rms_norm.backward": lower case, digits, '_' and '.'
  std::string chapter;  // "docs/course/06-rms-norm.md"
};

/// The exercises of a registry text (tools/exercises.txt), in its order. Blank lines and
/// lines starting with '#' are skipped; any other line is "<id> <chapter>". Throws
/// tg::ValueError naming the line for a malformed line or an id listed twice.
std::vector<Exercise> parse_registry(std::string_view text);

/// The exercise of `course` with this id, or null when the course does not list it.
const Exercise* find_exercise(const std::vector<Exercise>& course, std::string_view id);

/// The ids to blank: all of them (from empty), or `from` and every exercise after it in
/// the course. Throws tg::ValueError for an id the registry does not list.
std::set<std::string> exercises_from(const std::vector<Exercise>& course, std::string_view from);

/// `source` with the body of every marked exercise whose id is in `blank` replaced by the
/// call that throws (see the top of this file); `found` receives the id of every marked
/// exercise in the file, blanked or not, in order. Throws tg::ValueError naming
/// `file_name` and the line for a marker of an unlisted exercise, a begin without its end,
/// an end without its begin, or nested exercises.
std::string blank_exercises(std::string_view source, std::string_view file_name,
                            const std::vector<Exercise>& course, const std::set<std::string>& blank,
                            std::vector<std::string>* found);

/// `source` with one line added after the begin marker of every exercise:
///     ::tg::detail::exercise_reached("rms_norm.backward");
/// and the solution kept. A tree of such files (student_tree --probe) records which
/// exercises each test runs (tools/exercise_hooks.h), which is how tests/exercise_ties.txt is made
/// (scripts/tie_exercises.sh). The same checks as blank_exercises.
std::string probe_exercises(std::string_view source, std::string_view file_name,
                            const std::vector<Exercise>& course, std::vector<std::string>* found);

// ---- answers left in a student tree

/// Lines shorter than this (trimmed) are too common to give a solution away.
inline constexpr size_t kMinAnswerLine = 20;

/// Whether a line of a solution body would give the solution away: not if it is nothing but
/// braces, parentheses and semicolons, nor if it only walks or locates the data, which every
/// kernel does alike — a loop header (`for (...) {`, not a loop with its body on the same
/// line), a using-declaration, a `const int64_t`
/// index, a `const T*` pointer or `const T&` reference into an input — nor if it is a hook a
/// generated tree put there (tools/exercise_hooks.h), so a student tree can be made again
/// from a student tree.
bool gives_away(std::string_view line);

/// For every exercise marked in `source`, the lines of its solution body that would give it
/// away: trimmed, at least kMinAnswerLine characters long, and gives_away. Added to `lines`
/// (id -> lines).
void collect_answer_lines(std::string_view source, std::string_view file_name,
                          const std::vector<Exercise>& course,
                          std::map<std::string, std::set<std::string>>* lines);

/// Every place in `text` (a file of a generated tree, named `file_name`) that contains a line
/// of `answers` for an exercise in `blank`: "<file>:<line>: exercise <id>: <answer line>".
std::vector<std::string> find_answers(std::string_view text, std::string_view file_name,
                                      const std::map<std::string, std::set<std::string>>& answers,
                                      const std::set<std::string>& blank);

}  // namespace tg::tools
