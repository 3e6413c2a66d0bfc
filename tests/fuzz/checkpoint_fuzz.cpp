// tests/fuzz/checkpoint_fuzz.cpp — nn::load_checkpoint on arbitrary files, into a small
// model with an AdamW optimizer and a generator. A file it refuses must leave all three as
// they were (load_checkpoint is all or nothing).
#include <cstring>
#include <memory>

#include "fuzz_util.h"
#include "nn/nn.h"

namespace {

struct Run {
  tg::nn::Sequential model;
  std::unique_ptr<tg::nn::AdamW> opt;
  tg::Generator gen{7};
  Run() {
    tg::Generator g(1);
    model.emplace_back<tg::nn::Linear>(3, 4, tg::nn::LinearOptions{}, g);
    model.emplace_back<tg::nn::ReLU>();
    model.emplace_back<tg::nn::Linear>(4, 2, tg::nn::LinearOptions{}, g);
    opt = std::make_unique<tg::nn::AdamW>(model.parameters(), tg::nn::AdamWOptions{.lr = 1e-3});
  }
  std::vector<float> snapshot() const {
    std::vector<float> out;
    for (const auto& p : model.parameters()) {
      const auto v = p.to_vector<float>();
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Run run;
  const std::string path = tg::fuzz::write_temp_file(data, size, ".safetensors");
  const std::vector<float> before = run.snapshot();
  const double lr = run.opt->lr();
  const uint64_t draw = tg::Generator(run.gen).integer(0, 1 << 30);
  try {
    tg::nn::load_checkpoint(path, run.model, run.opt.get(), {{"data", &run.gen}});
  } catch (const tg::Error&) {
    // Refused: nothing may have changed.
    const std::vector<float> after = run.snapshot();
    if (std::memcmp(before.data(), after.data(), before.size() * sizeof(float)) != 0 ||
        run.opt->lr() != lr || tg::Generator(run.gen).integer(0, 1 << 30) != draw)
      __builtin_trap();
  }
  return 0;
}
