// examples/common/cli.cpp — see cli.h.
#include "examples/common/cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include "core/core.h"
#include "nn/distributed/process_group.h"

namespace tg::examples {
namespace {

namespace fs = std::filesystem;

// One line: a message that spans lines (a tape listing, say) is joined with "; ".
std::string one_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("; ") : std::string(1, c);
  return out;
}

void print_error(const std::string& program, const std::string& what) {
  // "tiny_lm: ..." and "tiny_lm sample: ..." name the program already.
  const std::string line = one_line(what);
  const bool named = line.starts_with(program) && line.size() > program.size() &&
                     (line[program.size()] == ':' || line[program.size()] == ' ');
  // In a data-parallel run every rank may say something: the line names which one.
  const std::string rank =
      tg::distributed::world_size() > 1
          ? fmt::format("[rank {} of {}] ", tg::distributed::rank(), tg::distributed::world_size())
          : "";
  std::fprintf(stderr, "%s%s%s\n", rank.c_str(), named ? "" : (program + ": ").c_str(),
               line.c_str());
}

}  // namespace

namespace {

CLI::Validator real_at_least(double lo, bool strict, const char* name) {
  return CLI::Validator(
      [lo, strict](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && *end == '\0' && std::isfinite(v);
        if (number && (strict ? v > lo : v >= lo)) return "";
        return fmt::format("value {} is not a finite number {} {}", text, strict ? ">" : ">=", lo);
      },
      strict ? "REAL > 0" : "REAL >= 0", name);
}

}  // namespace

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto r = std::from_chars(text.data(), end, v);
        if (!text.empty() && r.ec == std::errc() && r.ptr == end && v >= lo && v <= hi) return "";
        if (r.ec == std::errc::result_out_of_range && r.ptr == end)
          return fmt::format("value {} is too large (at most {})", text, hi);
        if (hi == INT64_MAX) return fmt::format("value {} is not a whole number >= {}", text, lo);
        return fmt::format("value {} is not a whole number from {} to {}", text, lo, hi);
      },
      hi == INT64_MAX ? fmt::format("INT >= {}", lo) : fmt::format("INT in [{}, {}]", lo, hi),
      "whole_number");
}

CLI::Validator positive_real() { return real_at_least(0, true, "positive_real"); }
CLI::Validator non_negative_real() { return real_at_least(0, false, "non_negative_real"); }

void one_line_errors(CLI::App& app, const std::string& program) {
  app.failure_message([program](const CLI::App*, const CLI::Error& e) {
    return fmt::format("{}: {} (see --help)\n", program, one_line(e.what()));
  });
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the help, or the one line of one_line_errors
    return code == 0 ? 0 : 2;
  }
}

int run_program(const std::string& program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const tg::Error& e) {
    print_error(program, e.what());
  } catch (const fs::filesystem_error& e) {
    print_error(program, e.what());
  } catch (const std::bad_alloc&) {
    print_error(program, "out of memory: the sizes asked for do not fit in this machine");
  } catch (const std::exception& e) {
    print_error(program, fmt::format("unexpected error: {}", e.what()));
  }
  // In a data-parallel run the other ranks would wait for this one at their next all-reduce
  // until the timeout: stop them all now (mpirun then exits with an error).
  if (tg::distributed::world_size() > 1) tg::distributed::abort(1, "");
  return 1;
}

std::unique_ptr<tg::distributed::Session> start_session(const std::string& program, int& argc,
                                                        char**& argv) {
  std::unique_ptr<tg::distributed::Session> session;
  run_program(program, [&] {
    session = std::make_unique<tg::distributed::Session>(argc, argv);
    return 0;
  });
  return session;
}

void prepare_out_dir(const std::string& program, const std::string& flag, const std::string& dir) {
  TG_CHECK(!dir.empty(), ValueError, "{}: {} must name a directory, got an empty path", program,
           flag);
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  TG_CHECK(!fs::exists(st) || fs::is_directory(st), ValueError,
           "{}: {} '{}' exists and is not a directory", program, flag, dir);
  fs::create_directories(dir, ec);
  TG_CHECK(!ec, ValueError, "{}: {} '{}': cannot create the directory ({})", program, flag, dir,
           ec.message());
  TG_CHECK(::access(dir.c_str(), W_OK | X_OK) == 0, ValueError, "{}: {} '{}' is not writable ({})",
           program, flag, dir, std::strerror(errno));
}

std::string read_input_file(const std::string& program, const std::string& flag,
                            const std::string& path, const std::string& hint) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  TG_CHECK(fs::exists(st), ValueError, "{}: {} '{}' does not exist{}{}", program, flag, path,
           hint.empty() ? "" : ". ", hint);
  TG_CHECK(!fs::is_directory(st), ValueError, "{}: {} '{}' is a directory, not a file", program,
           flag, path);
  std::ifstream in(path, std::ios::binary);
  TG_CHECK(in.good(), ValueError, "{}: {} '{}' cannot be read ({})", program, flag, path,
           std::strerror(errno));
  std::stringstream s;
  s << in.rdbuf();
  TG_CHECK(!in.bad(), ValueError, "{}: {} '{}': read error", program, flag, path);
  std::string bytes = s.str();
  TG_CHECK(!bytes.empty(), ValueError, "{}: {} '{}' is empty", program, flag, path);
  return bytes;
}

}  // namespace tg::examples
