# tests/nn/distributed/expect_failure.cmake — runs COMMAND (a "|" list) and passes if it fails
# (non-zero exit), says what EXPECT (a regex) says, and is over within SECONDS: a data-parallel
# run in which one rank failed must end, with a message, not wait for that rank forever.
#
#   cmake "-DCOMMAND=mpirun|-np|2|prog|..." "-DEXPECT=regex" -DSECONDS=30 -P expect_failure.cmake
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" command "${COMMAND}")
string(TIMESTAMP start "%s" UTC)
math(EXPR limit "${SECONDS} * 4")  # kill a hang well before ctest's own timeout would
execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT ${limit})
string(TIMESTAMP end "%s" UTC)
math(EXPR took "${end} - ${start}")
message("$ ${command}\nexit: ${code}, ${took} s\n${out}${err}")
if(code EQUAL 0)
  message(FATAL_ERROR "it succeeded, but one rank was made to fail")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}'")
endif()
if(took GREATER SECONDS)
  message(FATAL_ERROR "it took ${took} s, more than ${SECONDS} s: the ranks waited too long")
endif()
