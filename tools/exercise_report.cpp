// tools/exercise_report.cpp — ties, grades and the blank-tree check (see the header).
#include "tools/exercise_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "tools/exercise_hooks.h"

namespace tg::tools {

namespace {

const std::string_view kNotImplemented = " is not implemented yet";

// The value of attribute `name` in the start tag `tag` ("" if absent).
std::string attribute(std::string_view tag, std::string_view name) {
  const std::string key = fmt::format(" {}=\"", name);
  const size_t at = tag.find(key);
  if (at == std::string_view::npos) return {};
  const size_t begin = at + key.size();
  const size_t end = tag.find('"', begin);
  return std::string(tag.substr(begin, end - begin));
}

std::string unescape_xml(std::string_view s) {
  static const std::pair<std::string_view, char> kEntities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}, {"&amp;", '&'}};
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    bool replaced = false;
    if (s[i] == '&') {
      for (const auto& [entity, ch] : kEntities) {
        if (s.substr(i, entity.size()) == entity) {
          out.push_back(ch);
          i += entity.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out.push_back(s[i++]);
  }
  return out;
}

bool contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

std::string TestInfo::exercise() const {
  for (const std::string& l : labels) {
    if (l.starts_with(kExerciseLabel)) return l.substr(kExerciseLabel.size());
  }
  return {};
}

std::vector<std::string> TestInfo::exercises() const {
  std::vector<std::string> ids;
  for (const std::string& l : labels) {
    if (l.starts_with(kNeedsLabel)) ids.push_back(l.substr(kNeedsLabel.size()));
  }
  if (std::string own = exercise(); !own.empty()) ids.push_back(std::move(own));
  return ids;
}

std::vector<TestInfo> parse_ctest_json(std::string_view json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  TG_CHECK(doc.is_object() && doc.contains("tests") && doc["tests"].is_array(), ValueError,
           "exercise_tests: not the output of ctest --show-only=json-v1");
  std::vector<TestInfo> tests;
  for (const nlohmann::json& t : doc["tests"]) {
    TestInfo info{t.value("name", std::string()), {}, {}, {}, {}};
    for (const nlohmann::json& a : t.value("command", nlohmann::json::array())) {
      if (a.is_string()) info.command.push_back(a.get<std::string>());
    }
    for (const nlohmann::json& p : t.value("properties", nlohmann::json::array())) {
      const std::string name = p.value("name", std::string());
      std::vector<std::string>* into = name == "LABELS"              ? &info.labels
                                       : name == "FIXTURES_REQUIRED" ? &info.fixtures_required
                                       : name == "FIXTURES_SETUP"    ? &info.fixtures_setup
                                                                     : nullptr;
      if (into == nullptr || !p.contains("value")) continue;
      const nlohmann::json& v = p["value"];
      if (v.is_string()) into->push_back(v.get<std::string>());
      if (!v.is_array()) continue;
      for (const nlohmann::json& l : v) {
        if (l.is_string()) into->push_back(l.get<std::string>());
      }
    }
    tests.push_back(std::move(info));
  }
  return tests;
}

std::vector<TestResult> parse_junit(std::string_view xml) {
  std::vector<TestResult> results;
  size_t at = 0;
  while ((at = xml.find("<testcase ", at)) != std::string_view::npos) {
    const size_t tag_end = xml.find('>', at);
    TG_CHECK(tag_end != std::string_view::npos, ValueError,
             "exercise_tests: a <testcase> tag never closes in the JUnit file");
    const std::string_view tag = xml.substr(at, tag_end - at);
    TestResult r{unescape_xml(attribute(tag, "name")), attribute(tag, "status"), {}};
    size_t end = tag_end + 1;
    if (!tag.ends_with("/")) {
      end = xml.find("</testcase>", tag_end);
      TG_CHECK(end != std::string_view::npos, ValueError,
               "exercise_tests: test case {} has no </testcase>", r.name);
      const std::string_view body = xml.substr(tag_end + 1, end - tag_end - 1);
      const size_t out_begin = body.find("<system-out>");
      const size_t out_end = body.find("</system-out>");
      if (out_begin != std::string_view::npos && out_end != std::string_view::npos) {
        const size_t b = out_begin + std::string_view("<system-out>").size();
        r.output = unescape_xml(body.substr(b, out_end - b));
      }
    }
    results.push_back(std::move(r));
    at = end;
  }
  return results;
}

std::string not_implemented_id(std::string_view text) {
  const size_t at = text.find(kNotImplemented);
  if (at == std::string_view::npos) return {};
  const size_t word = text.rfind("exercise ", at);
  if (word == std::string_view::npos) return {};
  const size_t begin = word + std::string_view("exercise ").size();
  return std::string(text.substr(begin, at - begin));
}

std::string first_failure(std::string_view output) {
  const std::vector<std::string_view> lines = lines_of(output);
  for (std::string_view line : lines) {
    const size_t at = line.find(kNotImplemented);
    if (at == std::string_view::npos) continue;
    const size_t word = line.rfind("exercise ", at);
    std::string_view message = line.substr(word == std::string_view::npos ? 0 : word);
    // Up to the chapters' paths (the Chinese one in parentheses after the English one):
    // GoogleTest adds '" thrown in the test body.' after them.
    if (const size_t both = message.find(".md)"); both != std::string_view::npos) {
      message = message.substr(0, both + 4);
    } else if (const size_t md = message.find(".md"); md != std::string_view::npos) {
      message = message.substr(0, md + 3);
    }
    return std::string(trimmed(message));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].ends_with(": Failure")) continue;
    // "path/to/x_test.cpp:45: Failure" then what failed: keep the file's name and the line.
    std::string_view where =
        lines[i].substr(0, lines[i].size() - std::string_view(": Failure").size());
    if (const size_t slash = where.rfind('/'); slash != std::string_view::npos) {
      where = where.substr(slash + 1);
    }
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (!trimmed(lines[j]).empty()) return fmt::format("{}: {}", where, trimmed(lines[j]));
    }
    return std::string(where);
  }
  for (std::string_view line : lines) {
    if (line.find("rror") != std::string_view::npos) return std::string(trimmed(line));
  }
  return {};
}

std::string skip_reason(std::string_view output) {
  const std::vector<std::string_view> lines = lines_of(output);
  for (size_t i = 0; i < lines.size(); ++i) {
    // GoogleTest prints "path/to/x_test.cpp:233: Skipped", then the GTEST_SKIP() message.
    if (!lines[i].ends_with(": Skipped")) continue;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (!trimmed(lines[j]).empty()) return std::string(trimmed(lines[j]));
    }
  }
  return {};
}

std::string format_ties(const std::vector<Exercise>& course, const std::vector<TestInfo>& tests,
                        const std::map<std::string, std::vector<std::string>>& reached) {
  std::string out =
      "# tests/exercise_ties.txt — written by scripts/tie_exercises.sh (do not edit by hand).\n"
      "# Each test that runs the code of a course exercise, as a probe tree recorded it:\n"
      "# <test>\\t<its other CTest labels, ','-separated>\\t<the exercises it runs, in course "
      "order>.\n"
      "# tests/CMakeLists.txt labels each test \"exercise:<the last>\" and \"needs:<the "
      "others>\".\n";
  for (const TestInfo& t : tests) {
    const auto it = reached.find(t.name);
    if (it == reached.end() || it->second.empty()) continue;
    std::vector<std::string> ids;
    for (const Exercise& e : course) {
      if (contains(it->second, e.id)) ids.push_back(e.id);
    }
    for (const std::string& id : it->second) {
      TG_CHECK(
          contains(ids, id), ValueError,
          "exercise_tests: test {} reached exercise {}, which tools/exercises.txt does not list",
          t.name, id);
    }
    // CMake reads this file as a list: no ';' anywhere in it.
    TG_CHECK(t.name.find(';') == std::string::npos, ValueError,
             "exercise_tests: test name {} contains ';'", t.name);
    std::vector<std::string> base;
    for (const std::string& l : t.labels) {
      if (!l.starts_with(kExerciseLabel) && !l.starts_with(kNeedsLabel)) base.push_back(l);
    }
    out += fmt::format("{}\t{}\t{}\n", t.name, fmt::join(base, ","), fmt::join(ids, " "));
  }
  return out;
}

Lang parse_lang(std::string_view name) {
  return name.starts_with("zh") ? Lang::kChinese : Lang::kEnglish;
}

std::string exercise_section(const Exercise& e, Lang lang) {
  // GitHub's anchors: the heading in lower case, spaces as '-'; Chinese characters stay.
  return lang == Lang::kChinese ? detail::chinese_chapter(e.chapter) + "#练习与测试"
                                : e.chapter + "#the-exercise-and-its-tests";
}

namespace {

/// The words of the table in each language.
struct TableWords {
  std::string_view exercise, status, passed, section, failure, pass, fail, none, not_run;
};

constexpr TableWords kEnglish{"exercise", "status",        "passed",
                              "read",     "first failure", "pass",
                              "FAIL",     "no test ran",   "not run (a test it needs failed)"};
constexpr TableWords kChinese{"练习",   "状态",         "通过",
                              "阅读",   "第一个失败",   "通过",
                              "未通过", "没有运行测试", "未运行（它依赖的测试失败了）"};

/// Columns padded by what a terminal shows: a Chinese character takes two columns.
size_t display_width(std::string_view s) {
  size_t width = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto byte = static_cast<unsigned char>(s[i]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte
    width += byte >= 0xE0 ? 2 : 1;        // 3- and 4-byte sequences: CJK, wide
  }
  return width;
}

std::string padded(std::string_view s, size_t width) {
  const size_t w = display_width(s);
  return std::string(s) + std::string(w < width ? width - w : 0, ' ');
}

}  // namespace

std::string grade_table(const std::vector<Exercise>& course, const std::vector<TestInfo>& tests,
                        const std::vector<TestResult>& results, std::string_view only, Lang lang) {
  const TableWords& w = lang == Lang::kChinese ? kChinese : kEnglish;
  std::map<std::string, const TestResult*> by_name;
  for (const TestResult& r : results) by_name[r.name] = &r;
  struct Row {
    std::string id, status, passed, section, failure;
  };
  std::vector<Row> rows;
  size_t complete = 0;
  for (const Exercise& e : course) {
    if (!only.empty() && e.id != only) continue;
    size_t total = 0, passed = 0;
    std::string failure;
    for (const TestInfo& t : tests) {
      if (t.exercise() != e.id) continue;
      const auto it = by_name.find(t.name);
      if (it == by_name.end()) continue;  // not run this time (a -L or -R filter)
      ++total;
      const TestResult& r = *it->second;
      if (r.status == "run") {
        ++passed;
      } else if (failure.empty()) {
        const std::string why =
            r.status == "notrun" ? std::string(w.not_run) : first_failure(r.output);
        failure = fmt::format("{}: {}", t.name, why.empty() ? std::string(w.fail) : why);
      }
    }
    const bool ok = total > 0 && passed == total;
    complete += ok ? 1 : 0;
    rows.push_back({e.id,
                    std::string(total == 0 ? w.none
                                : ok       ? w.pass
                                           : w.fail),
                    fmt::format("{}/{}", passed, total), exercise_section(e, lang), failure});
  }
  Row head{std::string(w.exercise), std::string(w.status), std::string(w.passed),
           std::string(w.section), std::string(w.failure)};
  size_t id_w = display_width(head.id), status_w = display_width(head.status);
  size_t passed_w = display_width(head.passed), section_w = display_width(head.section);
  for (const Row& r : rows) {
    id_w = std::max(id_w, display_width(r.id));
    status_w = std::max(status_w, display_width(r.status));
    passed_w = std::max(passed_w, display_width(r.passed));
    section_w = std::max(section_w, display_width(r.section));
  }
  auto line = [&](const Row& r) {
    std::string text =
        fmt::format("{}  {}  {}  {}  {}", padded(r.id, id_w), padded(r.status, status_w),
                    padded(r.passed, passed_w), padded(r.section, section_w), r.failure);
    while (text.ends_with(' ')) text.pop_back();
    return text + "\n";
  };
  std::string out = line(head);
  for (const Row& r : rows) out += line(r);
  out += lang == Lang::kChinese
             ? fmt::format("{} 个练习中，{} 个的测试全部通过\n", rows.size(), complete)
             : fmt::format("{} of {} exercises pass every test\n", complete, rows.size());
  return out;
}

std::vector<std::string> targets_of(const std::vector<TestInfo>& tests, std::string_view only,
                                    std::string_view bin_dir) {
  std::set<std::string> fixtures, targets;
  std::vector<const TestInfo*> chosen;
  for (const TestInfo& t : tests) {
    if (t.exercise() != only) continue;
    chosen.push_back(&t);
    fixtures.insert(t.fixtures_required.begin(), t.fixtures_required.end());
  }
  for (const TestInfo& t : tests) {  // CTest runs the setup of every fixture they require
    for (const std::string& f : t.fixtures_setup) {
      if (fixtures.count(f) && std::find(chosen.begin(), chosen.end(), &t) == chosen.end()) {
        chosen.push_back(&t);
      }
    }
  }
  const std::string prefix = std::string(bin_dir) + "/";
  for (const TestInfo* t : chosen) {
    size_t found = 0;
    for (const std::string& arg : t->command) {
      for (size_t at = arg.find(prefix); at != std::string::npos; at = arg.find(prefix, at + 1)) {
        const size_t begin = at + prefix.size();
        size_t end = begin;
        while (end < arg.size() && (std::isalnum(static_cast<unsigned char>(arg[end])) ||
                                    arg[end] == '_' || arg[end] == '-')) {
          ++end;
        }
        if (end == begin) continue;
        targets.insert(arg.substr(begin, end - begin));
        ++found;
      }
    }
    if (found == 0) return {};  // a test that runs no program of ours: build everything
  }
  return {targets.begin(), targets.end()};
}

std::vector<std::string> check_blank_tree(const std::vector<Exercise>& course,
                                          const std::vector<TestInfo>& tests,
                                          const std::vector<TestResult>& results) {
  std::map<std::string, const TestResult*> by_name;
  for (const TestResult& r : results) by_name[r.name] = &r;
  std::vector<std::string> problems;
  std::set<std::string> tested;
  for (const TestInfo& t : tests) {
    const auto it = by_name.find(t.name);
    if (it == by_name.end()) {
      problems.push_back(fmt::format("{}: listed but has no result", t.name));
      continue;
    }
    const TestResult& r = *it->second;
    const std::vector<std::string> ids = t.exercises();
    tested.insert(ids.begin(), ids.end());
    // CTest's "notrun" is a skip (GTEST_SKIP, a SKIP_RETURN_CODE) or a test whose fixture
    // setup failed; only the second says anything about the exercises.
    const bool setup_failed =
        r.status == "notrun" && r.output.starts_with("Failed test dependencies");
    if (ids.empty()) {
      if (r.status != "run" && r.status != "disabled" && (r.status != "notrun" || setup_failed)) {
        problems.push_back(fmt::format("{}: tied to no exercise, yet it did not pass ({}): {}",
                                       t.name, r.status, first_failure(r.output)));
      }
      continue;
    }
    if (r.status == "run") {
      problems.push_back(fmt::format("{}: tied to {}, yet it passed with every exercise blank",
                                     t.name, fmt::join(ids, ", ")));
      continue;
    }
    if (setup_failed) continue;  // its setup is a tied test too, checked on its own
    if (r.status == "notrun" || r.status == "disabled") {
      // A tied test that skipped itself ran none of its exercises' code, so it proves nothing
      // about the blanks: what it needs is missing here (scripts/setup.sh installs it).
      problems.push_back(fmt::format(
          "{}: tied to {}, but it skipped itself, so it checks none of them: {}", t.name,
          fmt::join(ids, ", "), skip_reason(r.output).empty() ? r.status : skip_reason(r.output)));
      continue;
    }
    const std::string id = not_implemented_id(r.output);
    if (!contains(ids, id)) {
      problems.push_back(fmt::format(
          "{}: tied to {}, but it failed without the NotImplemented message of one of them: {}",
          t.name, fmt::join(ids, ", "),
          id.empty() ? first_failure(r.output) : "exercise " + id + " (not tied)"));
    }
  }
  for (const Exercise& e : course) {
    if (!tested.count(e.id)) problems.push_back(fmt::format("exercise {}: no test runs it", e.id));
  }
  return problems;
}

}  // namespace tg::tools
