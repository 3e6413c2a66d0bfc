// tests/fuzz/fuzz_util.h — what the fuzz targets share.
//
// A target gets arbitrary bytes and must either accept them or refuse them with a tg::Error:
// anything else that escapes (another exception, a crash, a sanitizer report, a timeout)
// is a bug libFuzzer reports. Loaders that take a path get the bytes through a file.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace tg::fuzz {

/// The bytes as a string.
inline std::string bytes_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// A file of this process, rewritten with each input (a fuzzer runs one input at a time).
inline std::string write_temp_file(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string path =
      std::string(P_tmpdir) + "/tapegrad-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) __builtin_trap();  // the fuzzer's own machinery failed, not tapegrad
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

}  // namespace tg::fuzz
