// tests/nn/checkpoint_test.cpp — checkpoints: what the file holds, exact resume (N + M steps
// equal N, save, load, M), atomicity under SIGKILL, and every mismatch as a clear error.
#include "nn/checkpoint.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "core/safetensors.h"
#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn {
namespace {

using testing::as_doubles;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tapegrad_ckpt_" + name + "_" + std::to_string(::getpid()) + ".safetensors"))
      .string();
}

/// A small run: an MLP fitted to random data drawn from `data` (so the data order is part of
/// the state), AdamW, dropout-free. Returns the loss of each step.
struct TrainingRun {
  explicit TrainingRun(uint64_t seed)
      : init(seed), model({3, 8, 2}, {}, init), opt(model.parameters(), {.lr = 0.05}) {}
  std::vector<double> train(int steps) {
    std::vector<double> losses;
    for (int i = 0; i < steps; ++i) {
      const Tensor x = randn({4, 3}, kFloat32, data);
      const Tensor y = randn({4, 2}, kFloat32, data);
      const Tensor loss = mse_loss(model(x), y);
      opt.zero_grad();
      loss.backward();
      opt.step();
      losses.push_back(loss.item<float>());
      ++step;
    }
    return losses;
  }
  TrainingState state() const {
    return {.model = &model,
            .optimizer = &opt,
            .step = step,
            .generators = {{"data", &data}},
            .metadata = {{"note", "test run"}}};
  }
  Generator init;
  Generator data{123};
  MLP model;
  AdamW opt;
  int64_t step = 0;
};

TEST(CheckpointTest, ResumingIsBitIdentical) {
  TrainingRun straight(1);
  const std::vector<double> all = straight.train(7);

  TrainingRun first(1);
  const std::vector<double> head = first.train(4);
  const std::string path = temp_path("resume");
  save_checkpoint(path, first.state());

  TrainingRun second(99);  // different init and data seed: everything must come from the file
  second.data.manual_seed(555);
  const LoadedCheckpoint loaded =
      load_checkpoint(path, second.model, &second.opt, {{"data", &second.data}});
  EXPECT_EQ(loaded.step, 4);
  EXPECT_EQ(loaded.metadata.at("note"), "test run");
  second.step = loaded.step;
  EXPECT_EQ(second.opt.step_count(), 4);
  const std::vector<double> tail = second.train(3);

  std::vector<double> resumed = head;
  resumed.insert(resumed.end(), tail.begin(), tail.end());
  EXPECT_EQ(resumed, all);  // exactly, not approximately
  for (size_t i = 0; i < straight.model.parameters().size(); ++i) {
    EXPECT_EQ(as_doubles(second.model.parameters()[i]), as_doubles(straight.model.parameters()[i]));
  }
  std::filesystem::remove(path);
}

TEST(CheckpointTest, TheFileIsPlainSafetensorsWithPyTorchNames) {
  TrainingRun run(2);
  run.train(2);
  const std::string path = temp_path("names");
  save_checkpoint(path, run.state());
  const safetensors::Contents c = safetensors::load(path);
  EXPECT_TRUE(c.tensors.contains("0.weight"));
  EXPECT_TRUE(c.tensors.contains("2.bias"));
  EXPECT_TRUE(c.tensors.contains("optimizer.state.0.exp_avg"));
  EXPECT_EQ(c.metadata.at("tapegrad.step"), "2");
  EXPECT_EQ(c.metadata.at("tapegrad.optimizer"), "AdamW");
  EXPECT_EQ(c.metadata.at("tapegrad.rng.data"), fmt::format("123 {}", run.data.offset()));
  EXPECT_EQ(as_doubles(c.tensors.at("0.weight")), as_doubles(run.model.parameters()[0]));
  const LoadedCheckpoint meta = read_checkpoint_metadata(path);
  EXPECT_EQ(meta.step, 2);
  EXPECT_EQ(meta.metadata.size(), 1u);  // the caller's entries only
  std::filesystem::remove(path);
}

TEST(CheckpointTest, KillingTheWriterNeverLeavesABrokenFile) {
  // A child process saves big checkpoints (two alternating versions) in a loop; the parent
  // kills it with SIGKILL at varying moments. Every time, the file must load and be one of
  // the two complete versions.
  const std::string path = temp_path("kill");
  Generator gen(3);
  Linear model(512, 512, {}, gen);  // ~1 MB per file
  save_checkpoint(path, {.model = &model, .step = 0});
  for (int round = 0; round < 6; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (int64_t i = 1;; ++i) save_checkpoint(path, {.model = &model, .step = i % 2});
    }
    ::usleep(static_cast<useconds_t>(2000 + 7000 * round));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    Linear fresh(512, 512, {}, gen);
    const LoadedCheckpoint c = load_checkpoint(path, fresh);
    EXPECT_TRUE(c.step == 0 || c.step == 1) << c.step;
    EXPECT_EQ(as_doubles(fresh.weight), as_doubles(model.weight));
  }
  // Temporary files of killed writers may stay behind (they carry the pid); clean up.
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    if (entry.path().string().starts_with(path)) std::filesystem::remove(entry.path());
  }
}

TEST(CheckpointTest, MismatchesAreClearErrors) {
  TrainingRun run(4);
  run.train(1);
  const std::string path = temp_path("errors");
  save_checkpoint(path, run.state());

  MLP other({3, 5, 2});
  EXPECT_TG_THROW(load_checkpoint(path, other), ValueError, path, "does not fit the model",
                  "0.weight");
  TrainingRun fresh(5);
  SGD sgd(fresh.model.parameters(), {.lr = 0.1});
  EXPECT_TG_THROW(load_checkpoint(path, fresh.model, &sgd), ValueError, "AdamW state", "into SGD");
  Generator g;
  EXPECT_TG_THROW(load_checkpoint(path, fresh.model, nullptr, {{"dropout", &g}}), ValueError,
                  "no state for generator 'dropout'");
  TrainingState bad = run.state();
  bad.metadata["tapegrad.step"] = "7";
  EXPECT_TG_THROW(save_checkpoint(path, bad), ValueError, "'tapegrad.step' is reserved");
  EXPECT_TG_THROW(save_checkpoint(path, {}), ValueError, "no model");

  // A model-only file cannot restore an optimizer.
  save_checkpoint(path, {.model = &run.model, .step = 1});
  EXPECT_TG_THROW(load_checkpoint(path, fresh.model, &fresh.opt), ValueError,
                  "holds no optimizer state");
  std::filesystem::remove(path);
  EXPECT_TG_THROW(load_checkpoint(path, fresh.model), Error, path);
}

/// Every number of the run's model and optimizer state, and its data generator's position.
std::vector<std::vector<double>> snapshot(const TrainingRun& run) {
  std::vector<std::vector<double>> all;
  for (const Tensor& p : run.model.parameters()) all.push_back(as_doubles(p));
  for (const auto& [name, t] : run.opt.state_tensors()) all.push_back(as_doubles(t));
  all.push_back({static_cast<double>(run.opt.step_count()), run.opt.lr(),
                 static_cast<double>(run.data.offset())});
  return all;
}

TEST(CheckpointTest, ABadFileLeavesTheRunUntouched) {
  // Each file below is wrong in one place that load_checkpoint only meets after the model's
  // weights would fit: the optimizer state, its learning rate or step count, a generator.
  // Nothing of the run may change, the weights included.
  TrainingRun good(6);
  good.train(2);
  const std::string path = temp_path("untouched");
  auto write = [&](auto&& spoil) {
    safetensors::Contents c;
    save_checkpoint(path, good.state());
    c = safetensors::load(path);
    spoil(c);
    safetensors::save(path, c.tensors, c.metadata);
  };
  TrainingRun victim(7);
  victim.train(3);
  const auto before = snapshot(victim);
  auto expect_untouched = [&](const char* what, const char* message) {
    EXPECT_TG_THROW(load_checkpoint(path, victim.model, &victim.opt, {{"data", &victim.data}}),
                    ValueError, path, message)
        << what;
    EXPECT_EQ(snapshot(victim), before) << what;
  };
  write([](safetensors::Contents& c) {
    c.tensors["optimizer.state.0.exp_avg"] = zeros({2, 2});  // the wrong shape
  });
  expect_untouched("a wrongly shaped exp_avg", "does not fit the AdamW");
  write([](safetensors::Contents& c) { c.tensors.erase("optimizer.state.1.exp_avg_sq"); });
  expect_untouched("a missing exp_avg_sq", "part of its state");
  write([](safetensors::Contents& c) { c.metadata["tapegrad.optimizer.lr"] = "fast"; });
  expect_untouched("a learning rate that is no number", "tapegrad.optimizer.lr = 'fast'");
  write([](safetensors::Contents& c) { c.metadata.erase("tapegrad.optimizer.lr"); });
  expect_untouched("no learning rate", "no 'tapegrad.optimizer.lr' entry");
  write([](safetensors::Contents& c) { c.metadata["tapegrad.optimizer.step_count"] = "-3"; });
  expect_untouched("a negative step count", "negative");
  write([](safetensors::Contents& c) { c.metadata["tapegrad.rng.data"] = "1 two"; });
  expect_untouched("a generator state that is no number", "not '<seed> <offset>'");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tg::nn
