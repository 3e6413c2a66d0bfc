// file: examples/course/ddp_buckets.cpp
// Chapter 25: which gradients travel together. The parameters of tiny_lm's default model (on
// its default data, 70 characters) with their bytes, in the order named_parameters lists them;
// backward finishes them roughly in the reverse order, the head first and the embedding last.
// Then tg::distributed::assign_buckets at three caps: PyTorch's default 25 MiB, tiny_lm's
// --bucket-kb 128 and 16 KiB; and the buckets DistributedDataParallel makes from the model,
// here in a world of one process.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/core.h"
#include "nn/distributed/buckets.h"
#include "nn/distributed/ddp.h"
#include "nn/nn.h"

namespace nn = tg::nn;
namespace dist = tg::distributed;

int main() {
  const nn::TransformerConfig config{.vocab_size = 70,
                                     .context_length = 32,
                                     .d_model = 64,
                                     .n_layers = 3,
                                     .n_heads = 4,
                                     .d_ff = 192,
                                     .rope = true};
  tg::Generator gen(25);
  nn::TransformerLM model(config, gen);

  // 1. The gradients to send: one per parameter, as many bytes as the parameter (float32).
  std::vector<int64_t> bytes;
  fmt::print("{:>3}  {:<26} {:<10} {:>7}\n", "i", "parameter", "shape", "bytes");
  for (const auto& [name, p] : model.named_parameters()) {
    bytes.push_back(p.numel() * 4);
    fmt::print("{:>3}  {:<26} {:<10} {:>7}\n", bytes.size() - 1, name, fmt::format("{}", p.shape()),
               bytes.back());
  }
  int64_t total = 0;
  for (const int64_t b : bytes) total += b;
  fmt::print("{} parameters, {} bytes of gradient per step\n", bytes.size(), total);

  // 2. Buckets: filled from the last parameter to the first, each closed once it holds the cap.
  for (const int64_t cap : {int64_t{25} << 20, int64_t{128} << 10, int64_t{16} << 10}) {
    const std::vector<std::vector<size_t>> buckets = dist::assign_buckets(bytes, cap);
    fmt::print("cap {:>5} KiB: {} bucket{}\n", cap >> 10, buckets.size(),
               buckets.size() == 1 ? "" : "s");
    for (size_t b = 0; b < buckets.size(); ++b) {
      int64_t size = 0;
      std::string members;
      for (const size_t i : buckets[b]) {
        size += bytes[i];
        members += fmt::format(" {}", i);
      }
      fmt::print("  bucket {:>2}: {:>6} bytes, parameters{}\n", b, size, members);
    }
  }

  // 3. DistributedDataParallel calls assign_buckets on the model's own parameters.
  const dist::DistributedDataParallel ddp(model, {.bucket_cap_bytes = int64_t{128} << 10});
  fmt::print("DistributedDataParallel, 128 KiB, {} process: {} buckets, the same as above: {}\n",
             dist::world_size(), ddp.buckets().size(),
             ddp.buckets() == dist::assign_buckets(bytes, int64_t{128} << 10));
}
