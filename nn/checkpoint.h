// nn/checkpoint.h — save a training run, and resume it exactly where it stopped.
//
// A checkpoint is ONE safetensors file (core/safetensors.h), so any safetensors reader —
// PyTorch's included — can open it:
//
//   tensors   <name>                      every model parameter under its state_dict name
//                                         ("blocks.0.attn.qkv.weight"), loadable into a
//                                         PyTorch twin as it is
//             optimizer.<state name>      the optimizer's state ("optimizer.state.0.exp_avg")
//   metadata  tapegrad.step               the training step the run had finished
//             tapegrad.optimizer          "AdamW", with .step_count and .lr
//             tapegrad.rng.<name>         "<seed> <offset>" of each generator the run uses
//             tapegrad.grad_scaler        a float16 run's loss scale and its options
//                                         (nn/grad_scaler.h: state_string)
//             <anything else>             the caller's entries: the model config, the
//                                         tokenizer's vocabulary, ...
//
// Resuming is bit-identical: parameters, optimizer state and step counts, and the random
// streams (data order, dropout) continue exactly as if the run had never stopped — the
// test trains N steps, saves, loads into fresh objects, trains M more, and compares the
// losses with a straight run of N + M steps.
// Writes are atomic (temporary file, flush, rename): killing the process mid-save leaves
// the previous checkpoint intact.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "nn/grad_scaler.h"
#include "nn/module.h"
#include "nn/optim.h"

namespace tg::nn {

/// Everything a training loop needs to save and restore. Pointers may be null (no
/// optimizer, e.g. for an inference-only file); generators are named by the caller.
struct TrainingState {
  const Module* model = nullptr;
  const Optimizer* optimizer = nullptr;
  int64_t step = 0;
  std::map<std::string, const Generator*> generators = {};
  std::map<std::string, std::string> metadata = {};  ///< keys must not start with "tapegrad."
  const GradScaler* scaler = nullptr;                ///< a float16 run's loss scaling
};

/// Writes `state` to `path` atomically. ValueError for a reserved metadata key.
void save_checkpoint(const std::string& path, const TrainingState& state);

/// What load_checkpoint restored besides the objects it wrote into.
struct LoadedCheckpoint {
  int64_t step = 0;
  std::map<std::string, std::string> metadata;  ///< the caller's entries only
};

/// Reads `path` into `model` (strict: every parameter present with its shape), `optimizer`
/// (if not null; the file must hold the state of the same kind of optimizer), each named
/// generator (which must be in the file) and `scaler` (if not null; the file must hold a
/// scaler's state). Errors name the file and what did not match; nothing is changed then.
LoadedCheckpoint load_checkpoint(const std::string& path, Module& model,
                                 Optimizer* optimizer = nullptr,
                                 const std::map<std::string, Generator*>& generators = {},
                                 GradScaler* scaler = nullptr);

/// Only the caller's metadata and the step: enough to rebuild the model from its saved
/// config before calling load_checkpoint.
LoadedCheckpoint read_checkpoint_metadata(const std::string& path);

}  // namespace tg::nn
