# Builds and runs tests/install/consumer against tapegrad, in one of two modes.
# Invoked by CTest as: cmake -DMODE=... -DSOURCE_DIR=... -DBUILD_DIR=... -DWORK_DIR=... -P
cmake_minimum_required(VERSION 3.25)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(consumer_args -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build -G Ninja
                  -DTAPEGRAD_CONSUMER_MODE=${MODE})
if(MODE STREQUAL "find_package")
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  foreach(f IN ITEMS include/tapegrad/core/tensor.h lib/cmake/tapegrad/tapegradConfig.cmake)
    if(NOT EXISTS ${WORK_DIR}/prefix/${f})
      message(FATAL_ERROR "install did not produce ${f}")
    endif()
  endforeach()
  list(APPEND consumer_args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
else()
  # This mode compiles the whole library a second time. What it proves is the CMake wiring
  # (only the libraries are built, tapegrad::tapegrad links), not speed: so no optimisation,
  # no debug info and a unity build (TAPEGRAD_UNITY_BUILD), which together make that second
  # build about six times cheaper than a release one.
  list(APPEND consumer_args -DTAPEGRAD_SOURCE_DIR=${SOURCE_DIR} -DCMAKE_BUILD_TYPE=Debug
       -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DTAPEGRAD_UNITY_BUILD=ON)
endif()
run(${CMAKE_COMMAND} ${consumer_args})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
if(NOT last_output MATCHES "consumer: tensor\\(\\[\\[0\\., 3\\.\\]")
  message(FATAL_ERROR "unexpected consumer output:\n${last_output}")
endif()
message(STATUS "${MODE}: ${last_output}")
