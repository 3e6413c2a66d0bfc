// examples/course/pch.cpp — compiles the precompiled header that every course program
// shares (tapegrad_course_pch in examples/course/CMakeLists.txt). It has no code of its own.
