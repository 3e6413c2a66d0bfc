// file: examples/course/tiny_lm_checkpoint.cpp
// Chapter 17: a checkpoint of a tiny LM run. What the safetensors file holds (tensor names,
// metadata), then resuming: 4 steps, save, load into fresh objects, 4 more steps, against
// 8 steps straight. The losses must be identical, not merely close.
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/core.h"
#include "core/safetensors.h"
#include "nn/nn.h"

namespace {

namespace nn = tg::nn;

const nn::TextDataset& data() {
  static const nn::TextDataset d("the cat sat on the mat.\nthe dog ate the log.\n");
  return d;
}

/// Everything a run needs: model, optimizer, the generator that draws the batches.
struct Run {
  explicit Run(uint64_t seed)
      : init(seed),
        model({.vocab_size = data().tokenizer().vocab_size(),
               .context_length = 8,
               .d_model = 8,
               .n_layers = 1,
               .n_heads = 2,
               .d_ff = 16},
              init),
        opt(model.parameters(), {.lr = 1e-2}),
        batches(seed + 1) {}
  std::vector<float> train(int steps) {
    std::vector<float> losses;
    for (int i = 0; i < steps; ++i, ++step) {
      const nn::Batch b = data().get_batch("train", 2, 8, batches);
      const tg::Tensor loss = tg::cross_entropy(model(b.x), b.y);
      opt.zero_grad();
      loss.backward();
      opt.step();
      losses.push_back(loss.item<float>());
    }
    return losses;
  }
  nn::TrainingState state() const {
    return {.model = &model,
            .optimizer = &opt,
            .step = step,
            .generators = {{"data", &batches}},
            .metadata = {{"config", model.config.to_json()}}};
  }
  tg::Generator init;
  nn::TransformerLM model;
  nn::AdamW opt;
  tg::Generator batches;
  int64_t step = 0;
};

}  // namespace

int main() {
  const std::string path =
      (std::filesystem::temp_directory_path() / "tapegrad_course_ckpt.safetensors").string();
  Run straight(0);
  const std::vector<float> all = straight.train(8);

  Run first(0);
  std::vector<float> resumed = first.train(4);
  nn::save_checkpoint(path, first.state());

  const tg::safetensors::Contents file = tg::safetensors::load(path);
  fmt::print("{} tensors, for example:\n", file.tensors.size());
  for (const char* name : {"tok_emb.weight", "blocks.0.attn.qkv.weight", "head.weight",
                           "optimizer.state.2.exp_avg", "optimizer.state.2.exp_avg_sq"}) {
    fmt::print("  {:<28} {}\n", name, file.tensors.at(name).shape());
  }
  fmt::print("metadata:\n");
  for (const auto& [key, value] : file.metadata) {
    fmt::print("  {:<30} {}\n", key, key == "config" ? value.substr(0, 40) + "..." : value);
  }

  Run second(99);  // another init and data seed: everything must come from the file
  const nn::LoadedCheckpoint loaded =
      nn::load_checkpoint(path, second.model, &second.opt, {{"data", &second.batches}});
  second.step = loaded.step;
  const std::vector<float> tail = second.train(4);
  resumed.insert(resumed.end(), tail.begin(), tail.end());
  std::filesystem::remove(path);

  // Four decimals: the last bits of a loss depend on the CPU's instructions (fused
  // multiply-adds or not); the comparison below is exact, on the floats themselves.
  fmt::print("step  straight  4 + save + load + 4\n");
  for (size_t i = 0; i < all.size(); ++i) {
    fmt::print("{:>4}  {:.4f}    {:.4f}\n", i, all[i], resumed[i]);
  }
  fmt::print("bit-identical: {}\n", all == resumed ? "yes" : "no");
}
