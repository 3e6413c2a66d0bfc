// A consumer of tapegrad: prints one tensor and its transpose's strides.
#include <fmt/format.h>

#include "core/core.h"

int main() {
  const tg::Tensor x = tg::arange(6.0).view({2, 3});
  fmt::print("consumer: {} strides {}\n", x.t().to_string(), x.t().strides());
  return 0;
}
