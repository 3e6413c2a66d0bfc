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
// throws tg::NotImplemented naming the exercise and its chapter (core/error.h), indented
// like the begin marker. The fenced code must therefore be a whole function body or the
// tail of one (nothing after the end marker may use what the body declared): a throw is a
// valid body for any return type. Everything outside the markers is kept byte for byte.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tg::tools {

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
/// exercises each test runs (core/error.h), which is how tests/exercise_ties.txt is made
/// (scripts/tie_exercises.sh). The same checks as blank_exercises.
std::string probe_exercises(std::string_view source, std::string_view file_name,
                            const std::vector<Exercise>& course, std::vector<std::string>* found);

}  // namespace tg::tools
