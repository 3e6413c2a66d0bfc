// examples/common/cli.h — what the example programs share on their command line: flags
// checked as they are parsed, and every error as one line that names the flag, path or
// value, with a non-zero exit status (never an abort, a signal or a stack of messages).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "nn/distributed/process_group.h"

namespace tg::examples {

/// A bad command line prints one line, "<program>: <what is wrong> (see --help)".
void one_line_errors(CLI::App& app, const std::string& program);

/// Parses the command line (CLI11_PARSE, with the statuses of Unix tools): nothing when the
/// program should go on; 0 after --help; 2 after a bad command line, whatever CLI11's own
/// code for the kind of mistake (105, 106, ...).
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

/// Validators for real-valued flags: a finite number > 0, or >= 0 (CLI11's PositiveNumber
/// lets "nan" and "inf" through).
CLI::Validator positive_real();
CLI::Validator non_negative_real();
/// A whole number from lo to hi (decimal digits, an optional leading '-').
CLI::Validator whole_number(int64_t lo, int64_t hi = INT64_MAX);

/// Runs `body` and returns its status. Whatever it throws becomes one line on stderr,
/// prefixed with "<program>: " unless the message already starts with it, and status 1
/// (a command line that parsed but fails while running, a bad file included):
/// a tg::Error, a file-system error, running out of memory, anything else.
int run_program(const std::string& program, const std::function<int()>& body);

/// Makes the directory named by `flag` (e.g. "--out") exist and checks that it can be
/// written; otherwise a tg::ValueError naming the program, the flag, the path and why.
/// Starts the process group of a data-parallel run for the life of the returned object
/// (MPI_Init under mpirun; a world of one process otherwise), or prints why it could not and
/// returns null.
std::unique_ptr<tg::distributed::Session> start_session(const std::string& program, int& argc,
                                                        char**& argv);

void prepare_out_dir(const std::string& program, const std::string& flag, const std::string& dir);

/// The bytes of the file named by `flag`: a tg::ValueError naming the program, the flag and
/// the path when it does not exist (followed by `hint`), is a directory, cannot be read or
/// is empty.
std::string read_input_file(const std::string& program, const std::string& flag,
                            const std::string& path, const std::string& hint = "");

}  // namespace tg::examples
