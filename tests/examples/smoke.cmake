# tests/examples/smoke.cmake — runs a training example at tiny sizes and checks what it left.
#
#   cmake -DRUN="prog|--flag|value" [-DRUN2="..." [-DRUN3="..."]] -DOUT_DIR=dir
#         [-DFILES="a|b"] [-DEXPECT="key=value|key>value|key<value"] [-DREQUIRE_PATH=path]
#         [-DCOMPARE_CSV=other.csv -DCOMPARE_AFTER=step] -P smoke.cmake
#
# OUT_DIR is emptied first. RUN (then RUN2 and RUN3, if given) must exit 0. The last line of
# the last run's stdout must be the --json summary object; each EXPECT entry checks one of its
# numbers.
# FILES must exist in OUT_DIR. With COMPARE_CSV, the rows of OUT_DIR/metrics.csv for steps
# after COMPARE_AFTER must equal those of COMPARE_CSV, elapsed time aside (the resume test).
# Lists use "|" because ";" does not survive add_test. A missing REQUIRE_PATH (a data set)
# skips the test: exit code 77, registered as SKIP_RETURN_CODE.
cmake_minimum_required(VERSION 3.25)

if(DEFINED REQUIRE_PATH AND NOT EXISTS "${REQUIRE_PATH}")
  message("SKIP: ${REQUIRE_PATH} is missing (its Debian package: scripts/setup.sh installs it)")
  cmake_language(EXIT 77)
endif()

file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}")

foreach(run IN ITEMS RUN RUN2 RUN3)
  if(NOT DEFINED ${run})
    continue()
  endif()
  string(REPLACE "|" ";" command "${${run}}")
  execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("$ ${command}\n${out}${err}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "exit code ${code}")
  endif()
endforeach()

# The summary: the last non-empty line of stdout.
string(STRIP "${out}" out)
string(REGEX REPLACE ".*\n" "" summary "${out}")
foreach(check IN LISTS EXPECT)
  string(REPLACE "|" ";" checks "${check}")
  foreach(c IN LISTS checks)
    if(NOT c MATCHES "^([a-z_]+)([=<>])(.+)$")
      message(FATAL_ERROR "bad EXPECT entry '${c}'")
    endif()
    set(key ${CMAKE_MATCH_1})
    set(op ${CMAKE_MATCH_2})
    set(want ${CMAKE_MATCH_3})
    string(JSON got ERROR_VARIABLE json_error GET "${summary}" ${key})
    if(json_error)
      message(FATAL_ERROR "summary has no '${key}' (${json_error}): ${summary}")
    endif()
    if((op STREQUAL "=" AND NOT got EQUAL want) OR (op STREQUAL ">" AND NOT got GREATER want)
       OR (op STREQUAL "<" AND NOT got LESS want))
      message(FATAL_ERROR "summary ${key} is ${got}, expected ${op} ${want}")
    endif()
  endforeach()
endforeach()

string(REPLACE "|" ";" files "${FILES}")
foreach(f IN LISTS files)
  if(NOT EXISTS "${OUT_DIR}/${f}")
    message(FATAL_ERROR "${OUT_DIR}/${f} was not written")
  endif()
endforeach()

# metrics.csv rows (step,loss,lr,grad_norm,evals...,elapsed_s) without the elapsed column,
# for steps after `after`.
function(rows_after csv after result)
  file(STRINGS "${csv}" lines)
  list(POP_FRONT lines)  # the header
  set(kept)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ",[^,]*$" "" line "${line}")
    string(REGEX MATCH "^[0-9]+" step "${line}")
    if(step GREATER after)
      list(APPEND kept "${line}")
    endif()
  endforeach()
  set(${result} "${kept}" PARENT_SCOPE)
endfunction()

if(DEFINED COMPARE_CSV)
  rows_after("${COMPARE_CSV}" ${COMPARE_AFTER} expected)
  rows_after("${OUT_DIR}/metrics.csv" ${COMPARE_AFTER} actual)
  list(LENGTH expected n)
  if(n EQUAL 0 OR NOT expected STREQUAL actual)
    string(REPLACE ";" "\n" expected "${expected}")
    string(REPLACE ";" "\n" actual "${actual}")
    message(FATAL_ERROR "resumed rows differ from the straight run's:\n"
                        "straight:\n${expected}\nresumed:\n${actual}")
  endif()
  message("${n} rows after step ${COMPARE_AFTER} equal the straight run's")
endif()
