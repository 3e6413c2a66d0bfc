// examples/common/mixed_step.cpp — the --dtype flag of the training examples.
#include "examples/common/mixed_step.h"

#include "core/error.h"

namespace tg::examples {

std::optional<DType> autocast_dtype_from_flag(const std::string& program, const std::string& flag) {
  TG_CHECK(flag == "f32" || flag == "bf16" || flag == "f16", ValueError,
           "{}: --dtype must be f32, bf16 or f16, got '{}'", program, flag);
  if (flag == "bf16") return kBFloat16;
  if (flag == "f16") return kFloat16;
  return std::nullopt;
}

void check_resume_dtype(const std::string& program, const std::string& checkpoint,
                        const std::map<std::string, std::string>& metadata,
                        const std::string& flag) {
  const auto saved = metadata.find("dtype");
  const std::string was = saved == metadata.end() ? "f32" : saved->second;
  TG_CHECK(was == flag, ValueError,
           "{}: --resume: '{}' was trained with --dtype {}, but this run has --dtype {}", program,
           checkpoint, was, flag);
}

}  // namespace tg::examples
