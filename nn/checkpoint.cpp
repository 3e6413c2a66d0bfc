// nn/checkpoint.cpp — see checkpoint.h.
#include "nn/checkpoint.h"

#include <charconv>
#include <optional>
#include <sstream>

#include "core/safetensors.h"

namespace tg::nn {
namespace {

constexpr std::string_view kReserved = "tapegrad.";
constexpr std::string_view kOptimizerPrefix = "optimizer.";

int64_t parse_int(const std::map<std::string, std::string>& meta, const std::string& key,
                  const std::string& path) {
  const auto it = meta.find(key);
  TG_CHECK(it != meta.end(), ValueError, "load_checkpoint: '{}' has no '{}' entry", path, key);
  int64_t v = 0;
  const char* end = it->second.data() + it->second.size();
  const auto r = std::from_chars(it->second.data(), end, v);
  TG_CHECK(r.ec == std::errc() && r.ptr == end, ValueError,
           "load_checkpoint: '{}' has {} = '{}', not an integer", path, key, it->second);
  return v;
}

double parse_double(const std::map<std::string, std::string>& meta, const std::string& key,
                    const std::string& path) {
  const auto it = meta.find(key);
  TG_CHECK(it != meta.end(), ValueError, "load_checkpoint: '{}' has no '{}' entry", path, key);
  double v = 0;
  const char* end = it->second.data() + it->second.size();
  const auto r = std::from_chars(it->second.data(), end, v);
  TG_CHECK(r.ec == std::errc() && r.ptr == end, ValueError,
           "load_checkpoint: '{}' has {} = '{}', not a number", path, key, it->second);
  return v;
}

LoadedCheckpoint caller_part(const safetensors::Contents& c, const std::string& path) {
  LoadedCheckpoint out;
  out.step = parse_int(c.metadata, "tapegrad.step", path);
  for (const auto& [key, value] : c.metadata) {
    if (!key.starts_with(kReserved)) out.metadata.emplace(key, value);
  }
  return out;
}

}  // namespace

void save_checkpoint(const std::string& path, const TrainingState& state) {
  TG_CHECK(state.model != nullptr, ValueError, "save_checkpoint: no model given for '{}'", path);
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, t] : state.model->state_dict()) {
    TG_CHECK(!name.starts_with(kOptimizerPrefix), ValueError,
             "save_checkpoint: parameter '{}' collides with the optimizer's prefix", name);
    tensors.emplace(name, t);
  }
  std::map<std::string, std::string> meta;
  for (const auto& [key, value] : state.metadata) {
    TG_CHECK(!key.starts_with(kReserved), ValueError,
             "save_checkpoint: metadata key '{}' is reserved (keys starting with '{}')", key,
             kReserved);
    meta.emplace(key, value);
  }
  meta["tapegrad.step"] = std::to_string(state.step);
  if (state.optimizer != nullptr) {
    for (const auto& [name, t] : state.optimizer->state_tensors()) {
      tensors.emplace(std::string(kOptimizerPrefix) + name, t);
    }
    meta["tapegrad.optimizer"] = std::string(state.optimizer->name());
    meta["tapegrad.optimizer.step_count"] = std::to_string(state.optimizer->step_count());
    meta["tapegrad.optimizer.lr"] = fmt::format("{}", state.optimizer->lr());
  }
  for (const auto& [name, gen] : state.generators) {
    TG_CHECK(gen != nullptr, ValueError, "save_checkpoint: generator '{}' is null", name);
    meta["tapegrad.rng." + name] = fmt::format("{} {}", gen->seed(), gen->offset());
  }
  if (state.scaler != nullptr) meta["tapegrad.grad_scaler"] = state.scaler->state_string();
  safetensors::save(path, tensors, meta);
}

LoadedCheckpoint load_checkpoint(const std::string& path, Module& model, Optimizer* optimizer,
                                 const std::map<std::string, Generator*>& generators,
                                 GradScaler* scaler) {
  const safetensors::Contents c = safetensors::load(path);
  LoadedCheckpoint out = caller_part(c, path);

  // Check everything before changing anything, so a bad file leaves the run untouched.
  StateDict weights;
  std::vector<std::pair<std::string, Tensor>> optim_state;
  for (const auto& [name, t] : c.tensors) {
    if (name.starts_with(kOptimizerPrefix)) {
      optim_state.emplace_back(name.substr(kOptimizerPrefix.size()), t);
    } else {
      weights.insert(name, t);
    }
  }
  int64_t optim_steps = 0;
  double lr = 0;
  if (optimizer != nullptr) {
    const auto kind = c.metadata.find("tapegrad.optimizer");
    TG_CHECK(kind != c.metadata.end(), ValueError,
             "load_checkpoint: '{}' holds no optimizer state, but a {} was given to restore", path,
             optimizer->name());
    TG_CHECK(kind->second == optimizer->name(), ValueError,
             "load_checkpoint: '{}' holds {} state, cannot restore it into {}", path, kind->second,
             optimizer->name());
    optim_steps = parse_int(c.metadata, "tapegrad.optimizer.step_count", path);
    lr = parse_double(c.metadata, "tapegrad.optimizer.lr", path);
    TG_CHECK(lr >= 0, ValueError, "load_checkpoint: '{}' has a learning rate of {}, below 0", path,
             lr);
    try {
      optimizer->check_state_tensors(optim_state, optim_steps);
    } catch (const Error& e) {
      TG_CHECK(false, ValueError, "load_checkpoint: '{}' does not fit the {}: {}", path,
               optimizer->name(), e.what());
    }
  }
  std::map<Generator*, std::pair<uint64_t, uint64_t>> rng;
  for (const auto& [name, gen] : generators) {
    const auto it = c.metadata.find("tapegrad.rng." + name);
    TG_CHECK(it != c.metadata.end(), ValueError,
             "load_checkpoint: '{}' has no state for generator '{}'", path, name);
    std::istringstream words(it->second);
    uint64_t seed = 0, offset = 0;
    words >> seed >> offset;
    TG_CHECK(!words.fail() && words.eof(), ValueError,
             "load_checkpoint: '{}' has generator '{}' = '{}', not '<seed> <offset>'", path, name,
             it->second);
    rng[gen] = {seed, offset};
  }

  // A scaler's state is checked on a copy, which then replaces it.
  std::optional<GradScaler> scaler_state;
  if (scaler != nullptr) {
    const auto it = c.metadata.find("tapegrad.grad_scaler");
    TG_CHECK(it != c.metadata.end(), ValueError,
             "load_checkpoint: '{}' holds no GradScaler state, but a scaler was given to restore",
             path);
    scaler_state.emplace(scaler->options());
    try {
      scaler_state->load_state_string(it->second);
    } catch (const Error& e) {
      TG_CHECK(false, ValueError, "load_checkpoint: '{}': {}", path, e.what());
    }
  }

  // load_state_dict checks everything before it writes; what comes after it cannot fail.
  try {
    model.load_state_dict(weights, /*strict=*/true);
  } catch (const Error& e) {
    TG_CHECK(false, ValueError, "load_checkpoint: '{}' does not fit the model: {}", path, e.what());
  }
  if (optimizer != nullptr) {
    optimizer->load_state_tensors(optim_state, optim_steps);
    optimizer->set_lr(lr);
  }
  for (auto& [gen, state] : rng) {
    gen->manual_seed(state.first);
    gen->set_offset(state.second);
  }
  if (scaler != nullptr) *scaler = *scaler_state;  // its stage starts over, as after update()
  return out;
}

LoadedCheckpoint read_checkpoint_metadata(const std::string& path) {
  return caller_part(safetensors::load(path), path);
}

}  // namespace tg::nn
