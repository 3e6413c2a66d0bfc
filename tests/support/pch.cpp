// tests/support/pch.cpp — compiles the precompiled header that every test file shares
// (tapegrad_test_pch in tests/CMakeLists.txt). It has no code of its own.
