// tools/exercise_markers.cpp — parsing the registry and blanking marked exercise bodies.
#include "tools/exercise_markers.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace tg::tools {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    lines.push_back(text.substr(0, eol));
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return lines;
}

std::string_view trimmed(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TG_CHECK(in.good(), ValueError, "cannot read {}", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

namespace {

bool valid_id(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

/// A marker line: "// exercise <id>: begin" or "...: end", after any indentation.
struct Marker {
  std::string_view id;
  bool begin = false;
};

bool parse_marker(std::string_view line, Marker* marker) {
  constexpr std::string_view kPrefix = "// exercise ";
  const std::string_view t = trimmed(line);
  if (!t.starts_with(kPrefix)) return false;
  const std::string_view rest = t.substr(kPrefix.size());
  for (const auto& [suffix, begin] : {std::pair{": begin", true}, std::pair{": end", false}}) {
    if (rest.ends_with(suffix)) {
      marker->id = rest.substr(0, rest.size() - std::string_view(suffix).size());
      marker->begin = begin;
      return valid_id(marker->id);
    }
  }
  return false;
}

}  // namespace

const Exercise* find_exercise(const std::vector<Exercise>& course, std::string_view id) {
  for (const Exercise& e : course) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

std::vector<Exercise> parse_registry(std::string_view text) {
  std::vector<Exercise> course;
  const std::vector<std::string_view> lines = lines_of(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string_view line = trimmed(lines[n]);
    if (line.empty() || line.starts_with('#')) continue;
    const size_t space = line.find_first_of(" \t");
    const std::string_view id = line.substr(0, space);
    const std::string_view chapter =
        space == std::string_view::npos ? std::string_view() : trimmed(line.substr(space));
    TG_CHECK(valid_id(id) && !chapter.empty() && chapter.find_first_of(" \t") == chapter.npos,
             ValueError,
             "exercise registry, line {}: expected \"<id> <chapter>\" (id of a-z, 0-9, '_', "
             "'.'), got \"{}\"",
             n + 1, line);
    TG_CHECK(find_exercise(course, id) == nullptr, ValueError,
             "exercise registry, line {}: exercise {} is listed twice", n + 1, id);
    course.push_back({std::string(id), std::string(chapter)});
  }
  return course;
}

std::set<std::string> exercises_from(const std::vector<Exercise>& course, std::string_view from) {
  std::set<std::string> ids;
  bool on = from.empty();
  for (const Exercise& e : course) {
    on = on || e.id == from;
    if (on) ids.insert(e.id);
  }
  TG_CHECK(from.empty() || !ids.empty(), ValueError,
           "--from {}: no such exercise (tools/exercises.txt lists them)", from);
  return ids;
}

namespace {

enum class Fill { kBlank, kProbe };

// The walk over the markers both tools share: kBlank replaces the bodies of the exercises
// in `blank` by the throwing call, kProbe keeps every body and puts the recording call in
// front of it.
std::string fill_exercises(std::string_view source, std::string_view file_name,
                           const std::vector<Exercise>& course, const std::set<std::string>& blank,
                           std::vector<std::string>* found, Fill fill) {
  std::string out;
  out.reserve(source.size());
  const Exercise* open = nullptr;  // the exercise whose body we are in
  bool skipping = false;           // ... and whether that body is being blanked
  bool filled = false;             // whether any call went in
  size_t open_line = 0;
  const std::vector<std::string_view> lines = lines_of(source);
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string_view line = lines[n];
    const bool last_has_newline = n + 1 < lines.size() || source.ends_with('\n');
    Marker m;
    if (parse_marker(line, &m)) {
      const Exercise* e = find_exercise(course, m.id);
      TG_CHECK(e != nullptr, ValueError, "{}:{}: exercise {} is not listed in tools/exercises.txt",
               file_name, n + 1, m.id);
      if (m.begin) {
        TG_CHECK(open == nullptr, ValueError,
                 "{}:{}: exercise {} begins inside exercise {} (begun on line {})", file_name,
                 n + 1, m.id, open ? open->id : "", open_line);
        open = e;
        open_line = n + 1;
        skipping = fill == Fill::kBlank && blank.count(e->id) > 0;
        if (found != nullptr) found->push_back(e->id);
        out.append(line).append("\n");
        const std::string_view indent = line.substr(0, line.find_first_not_of(" \t"));
        filled = filled || skipping || fill == Fill::kProbe;
        if (skipping) {
          out.append(indent)
              .append("::tg::detail::exercise_not_implemented(\"")
              .append(e->id)
              .append("\", \"")
              .append(e->chapter)
              .append("\");\n");
        } else if (fill == Fill::kProbe) {
          out.append(indent)
              .append("::tg::detail::exercise_reached(\"")
              .append(e->id)
              .append("\");\n");
        }
        continue;
      }
      TG_CHECK(open == e, ValueError, "{}:{}: the end of exercise {} without its begin", file_name,
               n + 1, m.id);
      open = nullptr;
      skipping = false;
    } else if (skipping) {
      continue;
    }
    out.append(line);
    if (last_has_newline) out.append("\n");
  }
  TG_CHECK(open == nullptr, ValueError, "{}:{}: exercise {} begins here but never ends", file_name,
           open_line, open ? open->id : "");
  if (filled) {
    // The calls need their declarations: the include goes before the file's first one.
    const std::string include = std::string(kHooksInclude) + "\n";
    const size_t first = out.starts_with("#include") ? 0 : out.find("\n#include");
    out.insert(first == std::string::npos ? 0 : first == 0 ? 0 : first + 1, include);
  }
  return out;
}

}  // namespace

std::string blank_exercises(std::string_view source, std::string_view file_name,
                            const std::vector<Exercise>& course, const std::set<std::string>& blank,
                            std::vector<std::string>* found) {
  return fill_exercises(source, file_name, course, blank, found, Fill::kBlank);
}

std::string probe_exercises(std::string_view source, std::string_view file_name,
                            const std::vector<Exercise>& course, std::vector<std::string>* found) {
  return fill_exercises(source, file_name, course, {}, found, Fill::kProbe);
}

namespace {

bool starts_with_any(std::string_view line, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes) {
    if (line.starts_with(p)) return true;
  }
  return false;
}

}  // namespace

bool gives_away(std::string_view line) {
  line = trimmed(line);
  if (line.find_first_not_of("{}();, ") == std::string_view::npos) return false;  // punctuation
  // What a generated tree puts in a fence (tools/exercise_hooks.h) is no answer.
  if (line.find("::tg::detail::exercise_") != std::string_view::npos) return false;
  // Lines that only walk or locate the data: every kernel has them.
  if (starts_with_any(line, {"using ", "const int64_t "})) return false;
  // A loop header, but not a loop with its body on the same line.
  if (line.starts_with("for (") && (line.ends_with("{") || line.ends_with(")"))) return false;
  if (line.starts_with("const ")) {
    const size_t ref = line.find_first_of("*&"), equals = line.find('=');
    if (ref != std::string_view::npos && equals != std::string_view::npos && ref < equals) {
      return false;  // const T* p = ... or const T& r = ...: a pointer into an input
    }
  }
  return true;
}

void collect_answer_lines(std::string_view source, std::string_view file_name,
                          const std::vector<Exercise>& course,
                          std::map<std::string, std::set<std::string>>* lines) {
  const Exercise* open = nullptr;
  const std::vector<std::string_view> all = lines_of(source);
  for (size_t n = 0; n < all.size(); ++n) {
    Marker m;
    if (parse_marker(all[n], &m)) {
      const Exercise* e = find_exercise(course, m.id);
      TG_CHECK(e != nullptr, ValueError, "{}:{}: exercise {} is not listed in tools/exercises.txt",
               file_name, n + 1, m.id);
      open = m.begin ? e : nullptr;
      continue;
    }
    if (open == nullptr) continue;
    const std::string_view line = trimmed(all[n]);
    if (line.size() < kMinAnswerLine || !gives_away(line)) continue;
    (*lines)[open->id].emplace(line);
  }
}

std::vector<std::string> find_answers(std::string_view text, std::string_view file_name,
                                      const std::map<std::string, std::set<std::string>>& answers,
                                      const std::set<std::string>& blank) {
  std::vector<std::string> hits;
  const std::vector<std::string_view> all = lines_of(text);
  for (size_t n = 0; n < all.size(); ++n) {
    if (all[n].size() < kMinAnswerLine) continue;
    for (const auto& [id, lines] : answers) {
      if (!blank.count(id)) continue;
      for (const std::string& answer : lines) {
        if (all[n].find(answer) == std::string_view::npos) continue;
        hits.push_back(fmt::format("{}:{}: exercise {}: {}", file_name, n + 1, id, answer));
      }
    }
  }
  return hits;
}

}  // namespace tg::tools
