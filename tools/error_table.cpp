// tools/error_table.cpp — see error_table.h.
#include "tools/error_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <tuple>

#include "core/error.h"

namespace tg::tools {
namespace {

// The headings of the areas, by the directory under tests/ that holds the test.
std::string area_heading(const std::string& area) {
  static const std::map<std::string, std::string> headings = {
      {"core", "Tensors, autograd and files (`core/`)"},
      {"ops", "Ops (`ops/`)"},
      {"nn", "Modules, optimizers and data (`nn/`)"},
      {"examples", "The example programs (`examples/`)"},
      {"tools", "The course's tools (`tools/`)"},
  };
  const auto it = headings.find(area);
  return it != headings.end() ? it->second : "`" + area + "/`";
}

// "tests/ops/fast/x.cpp" -> "ops": the directory right under tests/.
std::string area_of(const std::string& file) {
  const std::string prefix = "tests/";
  if (!file.starts_with(prefix)) return "other";
  const size_t slash = file.find('/', prefix.size());
  return slash == std::string::npos ? "other" : file.substr(prefix.size(), slash - prefix.size());
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// Replaces `root` where it starts a path: followed by '/' or by the end of a path.
void replace_root(std::string& text, std::string root, const std::string& placeholder) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty()) return;
  for (size_t at = text.find(root); at != std::string::npos; at = text.find(root, at + 1)) {
    const size_t end = at + root.size();
    const bool path_goes_on = end < text.size() && text[end] != '/' && text[end] != ' ' &&
                              text[end] != '\'' && text[end] != '"' && text[end] != ')' &&
                              text[end] != ',' && text[end] != ':';
    if (!path_goes_on) text.replace(at, root.size(), placeholder);
  }
}

// Paths relative to the build directory ("../tests/core/x_test.cpp:12") made absolute. A test
// names its own file with __FILE__ and the call site of an op with std::source_location: both
// are the path the compiler was given, which CMake makes absolute, but a compiler cache that
// shares objects between checkouts (ccache's base_dir, as .ci/run sets it) hands the compiler
// the path relative to the directory it compiles in, which Ninja makes the build directory.
// Only a path that starts with "../" where a path may start is taken, and only if it leads
// into the checkout, so a "../" in a user's message stays as it was.
void absolute_source_paths(std::string& text, const Roots& roots) {
  namespace fs = std::filesystem;
  if (roots.build.empty() || roots.source.empty()) return;
  const std::string source = fs::path(roots.source).lexically_normal().string();
  static const std::string kEnds = " \t\n'\"(),:";
  for (size_t at = text.find("../"); at != std::string::npos; at = text.find("../", at + 1)) {
    if (at > 0 && kEnds.find(text[at - 1]) == std::string::npos) continue;
    const size_t end = std::min(text.find_first_of(kEnds, at), text.size());
    const std::string path = (fs::path(roots.build) / text.substr(at, end - at)).lexically_normal();
    if (!path.starts_with(source + (source.ends_with('/') ? "" : "/"))) continue;
    text.replace(at, end - at, path);
  }
}

// `text` as a Markdown code span that survives a table: pipes escaped, a delimiter longer
// than any run of backticks inside, one line per line of text.
std::string code_span(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  lines.push_back(text.substr(start));
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    replace_all(line, "|", "\\|");
    if (line.empty()) line = " ";
    size_t run = 0, longest = 0;
    for (const char c : line) longest = std::max(longest, run = c == '`' ? run + 1 : 0);
    const std::string ticks(longest + 1, '`');
    const bool pad = line.front() == '`' || line.back() == '`';
    if (i > 0) out += "<br>";
    out += ticks + (pad ? " " : "") + line + (pad ? " " : "") + ticks;
  }
  return out;
}

}  // namespace

ErrorRecord parse_record(const std::string& line, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    detail::raise<ValueError>("error_table: {} is not JSON: {}", where, e.what());
  }
  const auto text = [&](const char* key) -> std::string {
    TG_CHECK(j.is_object() && j.contains(key) && j[key].is_string(), ValueError,
             "error_table: {} has no string \"{}\"", where, key);
    return j[key].get<std::string>();
  };
  ErrorRecord r;
  r.test = text("test");
  r.file = text("file");
  r.statement = text("statement");
  r.kind = text("kind");
  r.message = text("message");
  if (j.contains("line") && j["line"].is_number_integer()) r.line = j["line"].get<int>();
  if (j.contains("pid") && j["pid"].is_number_integer())
    r.pid = std::to_string(j["pid"].get<int64_t>());
  return r;
}

std::vector<ErrorRecord> read_log(const std::string& dir) {
  namespace fs = std::filesystem;
  TG_CHECK(fs::is_directory(dir), ValueError, "error_table: the log '{}' is not a directory", dir);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<ErrorRecord> out;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (!line.empty()) out.push_back(parse_record(line, fmt::format("{}:{}", f.string(), n)));
  }
  return out;
}

std::string normalise(std::string text, const Roots& roots, const std::string& pid) {
  absolute_source_paths(text, roots);
  // Longest first: the build directory usually lies inside the checkout.
  std::vector<std::pair<std::string, std::string>> order = {
      {roots.build, "<build>"}, {roots.source, "<source>"}, {roots.tmp, "<tmp>"}};
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [root, placeholder] : order) replace_root(text, root, placeholder);
  // The line of a call site (an anomaly or a hook names where the op was called) moves
  // with every edit of the test above it: the file is enough.
  static const std::regex line_of_source(R"((<source>/[^\s:'"]+):[0-9]+)");
  text = std::regex_replace(text, line_of_source, "$1:<line>");
  if (pid.empty()) return text;
  // Inside a temporary path ("<tmp>/name_1234/f.tmp-1234-0"), the recording pid as a whole
  // number.
  for (size_t at = text.find("<tmp>/"); at != std::string::npos; at = text.find("<tmp>/", at + 1)) {
    const size_t end = std::min(text.find_first_of(" '\"\n),", at), text.size());
    std::string path = text.substr(at, end - at);
    for (size_t p = path.find(pid); p != std::string::npos; p = path.find(pid, p + 1)) {
      const auto digit = [&](size_t i) {
        return i < path.size() && std::isdigit(static_cast<unsigned char>(path[i]));
      };
      if ((p > 0 && digit(p - 1)) || digit(p + pid.size())) continue;
      path.replace(p, pid.size(), "<pid>");
    }
    text.replace(at, end - at, path);
  }
  return text;
}

std::string render_table(std::vector<ErrorRecord> records, const Roots& roots) {
  for (ErrorRecord& r : records) {
    r.file = normalise(r.file, roots, "");
    if (r.file.starts_with("<source>/")) r.file = r.file.substr(9);
    r.statement = normalise(r.statement, roots, r.pid);
    r.message = normalise(r.message, roots, r.pid);
  }
  // One row per (test, statement, message): the ops' tests run twice (once per kernel path)
  // and a statement in a loop may meet several messages.
  const auto key = [](const ErrorRecord& r) {
    return std::tie(r.file, r.line, r.test, r.statement, r.kind, r.message);
  };
  std::sort(records.begin(), records.end(),
            [&](const ErrorRecord& a, const ErrorRecord& b) { return key(a) < key(b); });
  records.erase(
      std::unique(records.begin(), records.end(),
                  [&](const ErrorRecord& a, const ErrorRecord& b) { return key(a) == key(b); }),
      records.end());

  std::map<std::string, std::vector<const ErrorRecord*>> by_area;
  std::set<std::string> tests;
  for (const ErrorRecord& r : records) {
    by_area[area_of(r.file)].push_back(&r);
    tests.insert(r.test);
  }
  // The areas in the order of the code's layers, then any other.
  std::vector<std::string> areas = {"core", "ops", "nn", "examples", "tools"};
  for (const auto& [area, rows] : by_area)
    if (std::find(areas.begin(), areas.end(), area) == areas.end()) areas.push_back(area);

  std::string out = fmt::format(
      "# The errors you can meet\n\n"
      "<!-- Written by scripts/error_table.sh from what the tests saw; do not edit by hand.\n"
      "     .ci/run fails when this file no longer matches the tests. -->\n\n"
      "Every row is an error that a test provokes on purpose and checks: what the test did, "
      "and the exception (its `tg::` kind and message) or, for an example program, the one "
      "line it printed and its exit status: 2 for a bad command line, 1 for a failure while "
      "running. {} errors, from {} tests. Placeholders "
      "stand for what differs from machine to machine: `<source>` is the checkout, `<build>` "
      "the build directory, `<tmp>` the temporary directory, `<pid>` a process id and `<line>` "
      "a line number in a test.\n\n"
      "Catch `tg::Error` to catch all of them, or one kind to react to it: `ShapeError`, "
      "`DTypeError`, `IndexError`, `ValueError`, `MisuseError`, `DistributedError` "
      "(core/error.h).\n",
      records.size(), tests.size());
  for (const std::string& area : areas) {
    const auto it = by_area.find(area);
    if (it == by_area.end()) continue;
    out += fmt::format("\n## {}\n\n| What you did | What you read | Checked by |\n|---|---|---|\n",
                       area_heading(area));
    for (const ErrorRecord* r : it->second) {
      out += fmt::format("| {} | **{}**: {} | [{}](../{}) |\n", code_span(r->statement), r->kind,
                         code_span(r->message), r->test, r->file);
    }
  }
  return out;
}

}  // namespace tg::tools
