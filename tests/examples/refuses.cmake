# tests/examples/refuses.cmake — a program given a bad command line or a bad file refuses it
# properly: exit status 2 for a bad command line or 1 for a failure while running (never a
# signal), exactly one line on stderr, and that line matches EXPECT (it names the flag, path
# or value).
#
#   cmake -DRUN="prog|--flag|value" -DEXPECT=regex [-DWORK_DIR=dir] [-DUNCHANGED=file]
#         [-DREQUIRE_PATH=path] [-DNAME=test-name] -P refuses.cmake
#
# UNCHANGED names a file the refused run must leave byte for byte as it was (a checkpoint a
# refused --resume must not touch). A missing REQUIRE_PATH skips the test (exit code 77).
# With the environment variable TAPEGRAD_ERROR_LOG set to a directory, the command and the
# line it printed are written there for the table of errors (scripts/error_table.sh).
cmake_minimum_required(VERSION 3.25)

if(DEFINED REQUIRE_PATH AND NOT EXISTS "${REQUIRE_PATH}")
  message("SKIP: ${REQUIRE_PATH} is missing")
  cmake_language(EXIT 77)
endif()
if(NOT DEFINED WORK_DIR)
  set(WORK_DIR "${CMAKE_CURRENT_BINARY_DIR}")
endif()
file(MAKE_DIRECTORY "${WORK_DIR}")
if(DEFINED UNCHANGED)
  file(SHA256 "${UNCHANGED}" before)
endif()

string(REPLACE "|" ";" command "${RUN}")
execute_process(COMMAND ${command} WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("$ ${command}\nexit: ${code}\nstderr: ${err}")

# A signal ("Segmentation fault", "Child aborted") is reported as text, not a number.
if(NOT code MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the program died: ${code}")
endif()
if(code EQUAL 0)
  message(FATAL_ERROR "the program accepted it (exit status 0)")
endif()
if(NOT code MATCHES "^[12]$")
  message(FATAL_ERROR "exit status ${code}: expected 2 (a bad command line) or 1 (a failure "
                      "while running, a bad file included)")
endif()
string(REGEX REPLACE "\n$" "" line "${err}")
if(line STREQUAL "" OR line MATCHES "\n")
  message(FATAL_ERROR "expected exactly one line on stderr")
endif()
if(NOT line MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match '${EXPECT}'")
endif()
if(DEFINED UNCHANGED)
  file(SHA256 "${UNCHANGED}" after)
  if(NOT before STREQUAL after)
    message(FATAL_ERROR "${UNCHANGED} was changed")
  endif()
endif()

if(DEFINED ENV{TAPEGRAD_ERROR_LOG} AND DEFINED NAME)
  # The record of tests/support/test_util.h's record_error, for tools/error_table.h.
  list(GET command 0 program)
  get_filename_component(program "${program}" NAME)
  list(SUBLIST command 1 -1 args)
  list(PREPEND args "${program}")
  list(JOIN args " " statement)
  set(test "refuses.${NAME}")
  set(file "${CMAKE_CURRENT_LIST_DIR}/refusal_cases.cmake")
  set(kind "exit status ${code}")
  set(message "${line}")
  set(record "{}")
  foreach(field IN ITEMS test file statement kind message)
    # string(JSON ... SET) takes JSON text: quote and escape each value.
    set(value "${${field}}")
    string(REPLACE "\\" "\\\\" value "${value}")
    string(REPLACE "\"" "\\\"" value "${value}")
    string(REPLACE "\t" "\\t" value "${value}")
    string(JSON record SET "${record}" ${field} "\"${value}\"")
  endforeach()
  # One line (string(JSON) indents its output), one file per test (tests run in parallel).
  string(REPLACE "\n" "" record "${record}")
  file(WRITE "$ENV{TAPEGRAD_ERROR_LOG}/refuses.${NAME}.jsonl" "${record}\n")
endif()
