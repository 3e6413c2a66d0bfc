// core/safetensors.h — reading and writing .safetensors files.
//
// The format (https://huggingface.co/docs/safetensors), byte by byte:
//   [8 bytes]  N, the header's length, unsigned little-endian
//   [N bytes]  a JSON object: for each tensor name
//                {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
//              and optionally "__metadata__": {string: string}
//   [rest]     the data buffer; each tensor's bytes are buffer[begin, end), row-major,
//              little-endian
// tapegrad uses it for PyTorch reference fixtures (tests/reference/) and checkpoints.
// The reader trusts nothing: a truncated file, a malformed header, an unknown dtype, a
// shape that disagrees with its byte range, or overlapping or out-of-bounds offsets are
// each a tg::ValueError naming the file and the problem.
#pragma once

#include <map>
#include <string>

#include "core/tensor.h"

namespace tg::safetensors {

struct Contents {
  /// Tensors by name (each a fresh, contiguous tensor that owns its memory).
  std::map<std::string, Tensor> tensors;
  /// The "__metadata__" entries.
  std::map<std::string, std::string> metadata;
};

/// Reads a whole file. Dtypes F32, F64, F16, BF16, I64 and BOOL are supported.
Contents load(const std::string& path);

/// Writes `tensors` (any layout; written row-major) and `metadata` to `path` atomically:
/// into a temporary file next to it, flushed, then renamed over `path`, so a crash
/// mid-write leaves any previous file intact.
void save(const std::string& path, const std::map<std::string, Tensor>& tensors,
          const std::map<std::string, std::string>& metadata = {});

/// The same parsing, from bytes in memory (`what` names the source in errors).
Contents parse(const std::string& bytes, const std::string& what);
/// The bytes save() would write.
std::string serialize(const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace tg::safetensors
