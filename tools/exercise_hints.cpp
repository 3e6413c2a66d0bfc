// tools/exercise_hints.cpp — parsing tools/hints.txt and unlocking its hints (see the header).
#include "tools/exercise_hints.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace tg::tools {

std::map<std::string, std::vector<Hint>> parse_hints(std::string_view text,
                                                     const std::vector<Exercise>& course) {
  std::map<std::string, std::vector<Hint>> hints;
  std::string id;        // the exercise whose hints follow
  bool want_zh = false;  // an "en:" line was read, its "zh:" must come next
  const std::vector<std::string_view> lines = lines_of(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string_view line = trimmed(lines[n]);
    const size_t at = n + 1;
    if (line.empty() || line.starts_with('#')) continue;
    if (line.starts_with('[')) {
      TG_CHECK(!want_zh, ValueError, "hints: line {}: the hint before it has no 'zh:' line", at);
      TG_CHECK(line.ends_with(']'), ValueError, "hints: line {}: '{}' has no closing ']'", at,
               line);
      id = std::string(line.substr(1, line.size() - 2));
      TG_CHECK(find_exercise(course, id) != nullptr, ValueError,
               "hints: line {}: exercise '{}' is not in tools/exercises.txt", at, id);
      TG_CHECK(!hints.count(id), ValueError, "hints: line {}: exercise '{}' appears twice", at, id);
      hints[id];
      continue;
    }
    const bool en = line.starts_with("en:"), zh = line.starts_with("zh:");
    TG_CHECK(en || zh, ValueError,
             "hints: line {}: expected '[exercise]', 'en: ...' or 'zh: ...', got '{}'", at, line);
    TG_CHECK(!id.empty(), ValueError, "hints: line {}: a hint before any [exercise] line", at);
    TG_CHECK(!(en && want_zh), ValueError, "hints: line {}: the hint before it has no 'zh:' line",
             at);
    TG_CHECK(!(zh && !want_zh), ValueError,
             "hints: line {}: a 'zh:' line without its 'en:' line before it", at);
    const std::string body(trimmed(line.substr(3)));
    TG_CHECK(!body.empty(), ValueError, "hints: line {}: an empty hint", at);
    if (en) hints[id].push_back({body, {}});
    if (zh) hints[id].back().zh = body;
    want_zh = en;
  }
  TG_CHECK(!want_zh, ValueError, "hints: the last hint has no 'zh:' line");
  for (const Exercise& e : course) {
    const auto it = hints.find(e.id);
    TG_CHECK(it != hints.end() && it->second.size() >= 2, ValueError,
             "hints: exercise {} has {} hints; every exercise needs at least 2", e.id,
             it == hints.end() ? 0 : it->second.size());
  }
  return hints;
}

std::string next_hint(const std::map<std::string, std::vector<Hint>>& hints, std::string_view id,
                      Lang lang, const std::string& state_file) {
  const auto it = hints.find(std::string(id));
  TG_CHECK(it != hints.end(), ValueError, "hint: no hints for exercise '{}'", id);
  const std::vector<Hint>& all = it->second;
  size_t shown = 0;
  if (std::ifstream in(state_file); in) in >> shown;
  shown = std::min(shown + 1, all.size());
  std::filesystem::create_directories(std::filesystem::path(state_file).parent_path());
  std::ofstream out(state_file, std::ios::trunc);
  out << shown << "\n";
  TG_CHECK(out.good(), ValueError, "hint: cannot write {}", state_file);
  const bool zh = lang == Lang::kChinese;
  std::string text;
  for (size_t i = 0; i < shown; ++i) {
    text += fmt::format("{} {}/{}: {}\n", zh ? "提示" : "hint", i + 1, all.size(),
                        zh ? all[i].zh : all[i].en);
  }
  const size_t left = all.size() - shown;
  if (left == 0) {
    text += zh ? "这是最后一个提示。剩下的交给你和测试。\n"
               : "That was the last hint. The rest is yours, and the tests'.\n";
  } else {
    text +=
        zh ? fmt::format("还有 {} 个提示：再运行一次 scripts/hint.sh {} 解锁下一个。\n", left, id)
           : fmt::format("{} more: run scripts/hint.sh {} again to unlock the next.\n", left, id);
  }
  return text;
}

}  // namespace tg::tools
