// nn/module.cpp — the registry walks, state dicts and printing of Module.
#include "nn/module.h"

#include "nn/recompute.h"

#include <ostream>
#include <unordered_set>

namespace tg::nn {
namespace {

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// PyTorch's _addindent: every line but the first gets `spaces` more spaces.
std::string add_indent(const std::string& text, int spaces) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(static_cast<size_t>(spaces), ' ');
  }
  return out;
}

// 235146 -> "235,146"
std::string with_thousands(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  const size_t first = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i >= first && i > 0 && (i - first) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Depth-first walk over (dotted name, module), self first: the one traversal behind
// named_parameters, named_modules, state_dict and train.
template <class M, class Fn>
void walk(M& module, const std::string& prefix, Fn&& fn) {
  fn(prefix, module);
  for (auto& [name, child] : module.named_children()) walk(*child, join(prefix, name), fn);
}

}  // namespace

// ---- StateDict

StateDict::StateDict(std::vector<Item> items) {
  for (auto& [name, value] : items) insert(std::move(name), std::move(value));
}

void StateDict::insert(std::string name, Tensor value) {
  TG_CHECK(!contains(name), ValueError, "StateDict::insert: the key '{}' is already present", name);
  items_.emplace_back(std::move(name), std::move(value));
}

const Tensor* StateDict::find(std::string_view name) const {
  for (const auto& [key, value] : items_) {
    if (key == name) return &value;
  }
  return nullptr;
}

const Tensor& StateDict::at(std::string_view name) const {
  const Tensor* t = find(name);
  TG_CHECK(t != nullptr, IndexError, "StateDict::at: no key '{}' among the {} entries", name,
           items_.size());
  return *t;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items_) out.push_back(item.first);
  return out;
}

// ---- registration

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

void Module::check_new_name(const std::string& name, const char* what) const {
  TG_CHECK(!name.empty() && name.find('.') == std::string::npos, ValueError,
           "{}: {} name '{}' in {} must be non-empty and contain no '.'", what, what, name,
           type_name_);
  bool taken = false;
  for (const auto& p : params_) taken = taken || p.first == name;
  for (const auto& c : children_) taken = taken || c.first == name;
  TG_CHECK(!taken, ValueError, "{}: {} already has a parameter or submodule named '{}'", what,
           type_name_, name);
}

Tensor& Module::register_parameter(std::string name, Tensor& member, const Tensor& value) {
  check_new_name(name, "register_parameter");
  TG_CHECK(value.defined(), ValueError,
           "register_parameter: the value for '{}' in {} is an undefined tensor", name, type_name_);
  TG_CHECK(is_floating_point(value.dtype()), DTypeError,
           "register_parameter: '{}' in {} has dtype {}; parameters must be floating point", name,
           type_name_, value.dtype());
  member = value.detach();
  member.requires_grad_();
  params_.emplace_back(std::move(name), &member);
  return member;
}

void Module::add_child(std::string name, Module& child) {
  check_new_name(name, "register_module");
  TG_CHECK(&child != this, ValueError, "register_module: {} cannot be its own child '{}'",
           type_name_, name);
  children_.emplace_back(std::move(name), &child);
}

// ---- walks

std::vector<std::pair<std::string, Tensor*>> Module::parameter_slots() const {
  // exercise module.named_parameters: begin
  std::vector<std::pair<std::string, Tensor*>> slots;
  walk(*this, "", [&](const std::string& prefix, const Module& m) {
    for (const auto& [name, member] : m.params_) {
      if (member->defined()) slots.emplace_back(join(prefix, name), member);
    }
  });
  return slots;
  // exercise module.named_parameters: end
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> named;
  std::unordered_set<const TensorImpl*> seen;  // tied weights are listed once
  for (const auto& [name, slot] : parameter_slots()) {
    if (seen.insert(slot->impl()).second) named.emplace_back(name, *slot);
  }
  return named;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& item : named_parameters()) out.push_back(std::move(item.second));
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

void Module::zero_grad() {
  for (Tensor& p : parameters()) p.set_grad(Tensor());
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out;
  walk(*this, "", [&](const std::string& name, Module& m) { out.emplace_back(name, &m); });
  return out;
}

std::vector<std::pair<std::string, const Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, const Module*>> out;
  walk(*this, "", [&](const std::string& name, const Module& m) { out.emplace_back(name, &m); });
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_children() { return children_; }

std::vector<std::pair<std::string, const Module*>> Module::named_children() const {
  return {children_.begin(), children_.end()};
}

std::vector<Module*> Module::children() {
  std::vector<Module*> out;
  for (const auto& c : children_) out.push_back(c.second);
  return out;
}

std::vector<const Module*> Module::children() const {
  std::vector<const Module*> out;
  for (const auto& c : children_) out.push_back(c.second);
  return out;
}

Module& Module::train(bool on) {
  walk(*this, "", [&](const std::string&, Module& m) { m.training_ = on; });
  return *this;
}

// ---- state dicts

StateDict Module::state_dict() const {
  StateDict state;
  for (const auto& [name, slot] : parameter_slots()) state.insert(name, slot->detach());
  return state;
}

LoadResult Module::load_state_dict(const StateDict& state, bool strict) {
  // Every parameter slot under every name (tied weights included), as state_dict() has them.
  const std::vector<std::pair<std::string, Tensor*>> slots = parameter_slots();
  // 1. Find every problem before writing anything, so that a failed load changes nothing.
  LoadResult result;
  std::vector<std::string> mismatched;
  std::unordered_set<std::string> known;
  for (const auto& [name, slot] : slots) {
    known.insert(name);
    const Tensor* src = state.find(name);
    if (src == nullptr) {
      result.missing_keys.push_back(name);
    } else if (!src->defined()) {
      mismatched.push_back(fmt::format("{}: the state dict holds an undefined tensor", name));
    } else if (src->shape() != slot->shape()) {
      mismatched.push_back(
          fmt::format("{}: expected shape {}, got {}", name, slot->shape(), src->shape()));
    }
  }
  for (const auto& [name, value] : state) {
    if (!known.contains(name)) result.unexpected_keys.push_back(name);
  }
  const bool key_problems = !result.missing_keys.empty() || !result.unexpected_keys.empty();
  if (!mismatched.empty() || (strict && key_problems)) {
    std::string message = fmt::format("load_state_dict: cannot load into {} ({} parameters)",
                                      type_name_, slots.size());
    if (strict) {
      for (const auto& k : result.missing_keys) message += "\n  missing key: " + k;
      for (const auto& k : result.unexpected_keys) message += "\n  unexpected key: " + k;
    }
    for (const auto& m : mismatched) message += "\n  shape mismatch for " + m;
    throw ValueError(message);
  }
  // 2. Copy, converting dtypes; the optimizer-style in-place write is not recorded.
  NoGradGuard no_grad;
  for (const auto& [name, slot] : slots) {
    if (const Tensor* src = state.find(name)) slot->copy_(*src);
  }
  return result;
}

// ---- printing

// PyTorch's Module.__repr__: extra_repr lines, then "(name): child" lines.
std::string Module::repr() const {
  std::vector<std::string> lines;
  const std::string extra = extra_repr();
  size_t start = 0;
  while (!extra.empty()) {
    const size_t nl = extra.find('\n', start);
    lines.push_back(extra.substr(start, nl == std::string::npos ? nl : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  const size_t extra_lines = lines.size();
  for (const auto& [name, child] : children_) {
    lines.push_back("(" + name + "): " + add_indent(child->repr(), 2));
  }
  std::string out = type_name_ + "(";
  if (extra_lines == 1 && children_.empty()) {
    out += lines[0];
  } else if (!lines.empty()) {
    for (const auto& line : lines) out += "\n  " + line;
    out += "\n";
  }
  return out + ")";
}

std::string Module::to_string() const {
  const int64_t n = num_parameters();
  return fmt::format("{}  # {} parameter{}", repr(), with_thousands(n), n == 1 ? "" : "s");
}

std::ostream& operator<<(std::ostream& os, const Module& module) {
  return os << module.to_string();
}

Tensor UnaryModule::operator()(const Tensor& x) {
  if (!recompute_) return forward(x);
  return recompute([this](const std::vector<Tensor>& in) { return forward(in[0]); }, {x},
                   parameters());
}

}  // namespace tg::nn
