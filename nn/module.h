// nn/module.h — Module: the base of every layer and model (torch.nn.Module).
//
// A module owns parameters (leaf tensors that require grad) and submodules, both held as
// ordinary NAMED MEMBERS and registered once, in the constructor, by name:
//
//   class TwoLayer : public tg::nn::Module {
//    public:
//     TwoLayer() : Module("TwoLayer") {
//       register_module("fc1", fc1);                     // a member module
//       register_parameter("scale", scale, tg::ones({4}));  // a member tensor
//     }
//     Linear fc1{8, 4};
//     tg::Tensor scale;
//   };
//
// The registry keeps {name, pointer to the member}, so the member you read in forward()
// IS the parameter the optimizer updates (assigning a new tensor to the member replaces
// it). Because of those pointers a Module can be neither copied nor moved; hold models by
// value, or in a std::unique_ptr when you need to pass them around.
//
// Names join with dots exactly like PyTorch's state_dict keys, so checkpoints map one to
// one onto a PyTorch model: a parameter "weight" of child "qkv" of child "attn" of item 0
// of a ModuleList "blocks" is "blocks.0.attn.qkv.weight".
#pragma once

#include <fmt/format.h>

#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/core.h"
#include "ops/ops.h"

namespace tg::nn {

/// An ordered list of (name, tensor) pairs with unique names: what state_dict() returns and
/// load_state_dict() reads (like PyTorch's OrderedDict of tensors).
class StateDict {
 public:
  using Item = std::pair<std::string, Tensor>;

  StateDict() = default;
  /// ValueError on a repeated name.
  explicit StateDict(std::vector<Item> items);

  /// Appends `value` under `name`; ValueError if the name is already present.
  void insert(std::string name, Tensor value);
  /// The tensor named `name`, or nullptr.
  const Tensor* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// The tensor named `name`; IndexError naming the key if absent.
  const Tensor& at(std::string_view name) const;
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  /// The names, in order.
  std::vector<std::string> keys() const;
  const std::vector<Item>& items() const { return items_; }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
};

/// What a non-strict load_state_dict() did not match (PyTorch's _IncompatibleKeys).
struct LoadResult {
  std::vector<std::string> missing_keys;     ///< parameters the state dict had no entry for
  std::vector<std::string> unexpected_keys;  ///< entries that name no parameter
};

/// The base class of all layers and models, like torch.nn.Module.
class Module {
 public:
  /// `type_name` is what printing shows ("Linear", "MLP", ...).
  explicit Module(std::string type_name);
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = delete;
  Module& operator=(Module&&) = delete;

  const std::string& type_name() const { return type_name_; }

  // ---- parameters
  /// Every parameter of this module and its descendants, in registration order (depth
  /// first: own parameters, then each child's). A tensor registered twice (tied weights)
  /// appears once, as in PyTorch.
  std::vector<Tensor> parameters() const;
  /// parameters() with their dotted names ("fc1.weight").
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  /// Total number of elements over parameters().
  int64_t num_parameters() const;
  /// Resets every parameter's .grad to undefined (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad();

  // ---- the module tree
  /// This module (named "") and every descendant, depth first, with dotted names.
  std::vector<std::pair<std::string, Module*>> named_modules();
  std::vector<std::pair<std::string, const Module*>> named_modules() const;
  /// The direct submodules, in registration order, with their names.
  std::vector<std::pair<std::string, Module*>> named_children();
  std::vector<std::pair<std::string, const Module*>> named_children() const;
  std::vector<Module*> children();
  std::vector<const Module*> children() const;

  // ---- training mode
  /// Sets training mode on this module and every descendant (Dropout reads it).
  Module& train(bool on = true);
  /// train(false).
  Module& eval() { return train(false); }
  bool is_training() const { return training_; }

  // ---- checkpoints
  /// Every parameter under its dotted name, tied ones under each name. The tensors are
  /// detached handles that share the parameters' storage (no copy), so save them before
  /// the next optimizer step if you need a snapshot.
  StateDict state_dict() const;
  /// Copies each entry of `state` into the parameter of the same name, converting the
  /// dtype if needed (as PyTorch does), without recording anything on the tape.
  /// strict (the default): any missing key (a parameter with no entry), unexpected key
  /// (an entry with no parameter) or shape mismatch throws one ValueError listing every
  /// problem, and nothing is loaded.
  /// !strict: loads what matches and returns the missing and unexpected keys; a shape
  /// mismatch still throws (as in PyTorch: a same-named tensor of another shape is a bug).
  LoadResult load_state_dict(const StateDict& state, bool strict = true);

  // ---- printing
  /// The tree of modules as PyTorch prints it, then the parameter count:
  ///   MLP(
  ///     (0): Linear(in_features=2, out_features=16, bias=True)
  ///     (1): ReLU()
  ///   )  # 48 parameters
  std::string to_string() const;
  /// The text between the parentheses of this module's line, e.g.
  /// "in_features=2, out_features=16, bias=True"; empty by default. Override it per layer.
  virtual std::string extra_repr() const { return {}; }

 protected:
  /// Makes `member` a parameter named `name`: member = value.detach() with requires_grad
  /// set (value must be floating point), registered by address. Returns member.
  Tensor& register_parameter(std::string name, Tensor& member, const Tensor& value);
  /// Registers `child` (a member of this module, or owned by one through a unique_ptr)
  /// under `name`. Returns child.
  template <std::derived_from<Module> M>
  M& register_module(std::string name, M& child) {
    add_child(std::move(name), child);
    return child;
  }

 private:
  void check_new_name(const std::string& name, const char* what) const;
  void add_child(std::string name, Module& child);
  std::string repr() const;
  /// Every parameter slot of this module and its descendants, depth first, under its dotted
  /// name; a tensor registered twice (tied weights) appears under each of its names. The one
  /// walk behind named_parameters, state_dict and load_state_dict.
  std::vector<std::pair<std::string, Tensor*>> parameter_slots() const;

  std::string type_name_;
  std::vector<std::pair<std::string, Tensor*>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
  bool training_ = true;
};

/// A module that maps one tensor to one tensor (Linear, ReLU, Sequential, ...), so that it
/// can be called like a function and stacked in a Sequential.
class UnaryModule : public Module {
 public:
  using Module::Module;
  virtual Tensor forward(const Tensor& x) = 0;
  /// forward(x); with set_recompute(true), through nn::recompute (nn/recompute.h): what the
  /// module's ops save is not kept, and the module runs again during the backward.
  Tensor operator()(const Tensor& x);
  /// Activation checkpointing for this module, like wrapping its forward in PyTorch's
  /// torch.utils.checkpoint.checkpoint.
  void set_recompute(bool on) { recompute_ = on; }
  bool recomputes() const { return recompute_; }

 private:
  bool recompute_ = false;
};

/// A list of submodules named "0", "1", ..., like torch.nn.ModuleList. It has no forward:
/// the owner iterates over it (for (auto& block : blocks) x = (*block)(x);).
template <class T = Module>
class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}

  /// Appends `module` (named by its position) and returns it.
  T& push_back(std::unique_ptr<T> module) {
    TG_CHECK(module != nullptr, ValueError, "ModuleList::push_back: the module is null");
    register_module(std::to_string(items_.size()), *module);
    items_.push_back(std::move(module));
    return *items_.back();
  }
  /// Constructs a U (T or derived from T) in place and appends it.
  template <class U = T, class... Args>
  U& emplace_back(Args&&... args) {
    auto module = std::make_unique<U>(std::forward<Args>(args)...);
    U& ref = *module;
    push_back(std::move(module));
    return ref;
  }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  /// Item i; IndexError outside [0, size()).
  T& operator[](size_t i) const {
    TG_CHECK(i < items_.size(), IndexError, "ModuleList: index {} out of range for size {}", i,
             items_.size());
    return *items_[i];
  }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::unique_ptr<T>> items_;
};

/// Streams Module::to_string().
std::ostream& operator<<(std::ostream& os, const Module& module);

}  // namespace tg::nn

/// `fmt::print("{}\n", model)` prints Module::to_string() for any module type.
template <class M>
requires std::derived_from<M, tg::nn::Module>
struct fmt::formatter<M> : fmt::formatter<std::string_view> {
  auto format(const M& module, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(module.to_string(), ctx);
  }
};
