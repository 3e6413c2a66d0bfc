# tests/tools/write_student_tree.cmake — writes a fresh student tree of the real sources with
# build/bin/student_tree (TOOL) into DIR and checks it: the tool accepts every marker and
# finds every exercise of tools/exercises.txt, the tree is marked as a student tree, and a
# blanked body throws the exercise's NotImplemented instead of its solution.
file(REMOVE_RECURSE "${DIR}")
execute_process(COMMAND "${TOOL}" "${DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "student_tree exited with ${rc}")
endif()
if(NOT EXISTS "${DIR}/tools/STUDENT_TREE")
  message(FATAL_ERROR "the student tree has no tools/STUDENT_TREE")
endif()
file(READ "${DIR}/ops/rms_norm.cpp" text)
string(FIND "${text}" "exercise_not_implemented(\"rms_norm.backward\", \"docs/course/06-rms-norm.md\")" at)
if(at EQUAL -1)
  message(FATAL_ERROR "ops/rms_norm.cpp of the student tree still has the rms_norm.backward solution")
endif()
string(FIND "${text}" "dot += gr[c] * w[c] * xr[c]" solution)
if(NOT solution EQUAL -1)
  message(FATAL_ERROR "the solution of rms_norm.backward is still in the student tree")
endif()
file(REMOVE_RECURSE "${DIR}")
