// tools/exercise_hints.h — the course's hints, shown one at a time (scripts/hint.sh).
//
// tools/hints.txt holds, for every exercise, a few hints in order, from a nudge towards the
// idea to the shape of the computation, each in English and in Chinese:
//
//   [rms_norm.forward]
//   en: Each row is normalised on its own: ...
//   zh: 每一行各自归一化：……
//   en: ...
//   zh: ...
//
// A hint never holds a line of the solution: the student tree refuses any file that
// does (tools/exercise_markers.h, find_answers). A learner asks for the next hint with
// `scripts/hint.sh <id>`; what was shown is remembered in a file per exercise, so each
// call unlocks one more and repeats the ones before.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tools/exercise_markers.h"
#include "tools/exercise_report.h"

namespace tg::tools {

struct Hint {
  std::string en, zh;
};

/// The hints of a hints text, by exercise id, in order. Blank lines and '#' comments are
/// skipped. Throws tg::ValueError naming the line for: a hint before any [id], an id the
/// course does not list or listed twice, an "en:" not followed by its "zh:" (or a "zh:"
/// without one), an empty hint, any other line; and naming the exercise for one of the
/// course with fewer than two hints.
std::map<std::string, std::vector<Hint>> parse_hints(std::string_view text,
                                                     const std::vector<Exercise>& course);

/// Unlocks the next hint of `id`: reads how many were shown from `state_file` (none if it
/// does not exist), writes one more back (at most all of them), and returns the text to
/// print: every unlocked hint, numbered "1/3", in `lang`, and a last line that says how
/// many remain or that this was the last. Throws tg::ValueError for an id without hints
/// and for a state file that cannot be written.
std::string next_hint(const std::map<std::string, std::vector<Hint>>& hints, std::string_view id,
                      Lang lang, const std::string& state_file);

}  // namespace tg::tools
