// core/autograd.cpp — recording ops onto the tape: grad mode, nodes, Function::apply's
// wiring, and the autograd methods of Tensor. Running backward is core/engine.cpp.
#include "core/autograd.h"
#include "core/leaf_grads.h"

#include <atomic>

namespace tg {
namespace {

thread_local bool t_grad_mode = true;
thread_local bool t_anomaly_mode = false;
std::atomic<uint64_t> g_next_sequence_nr{0};

}  // namespace

bool grad_mode_enabled() { return t_grad_mode; }
void set_grad_mode(bool enabled) { t_grad_mode = enabled; }
bool anomaly_mode_enabled() { return t_anomaly_mode; }
DetectAnomalyGuard::DetectAnomalyGuard() : previous_(t_anomaly_mode) { t_anomaly_mode = true; }
DetectAnomalyGuard::~DetectAnomalyGuard() { t_anomaly_mode = previous_; }

Node::Node(std::string_view name, Here where)
    : name_(name), where_(where), sequence_nr_(g_next_sequence_nr++) {}

Node::~Node() {
  // Destroying a node drops its edges, which may destroy the node before it, and so on:
  // a chain of 100,000 ops would recurse 100,000 deep and overflow the stack. Instead,
  // nodes we are the last owner of are moved to a list and destroyed by one loop.
  thread_local std::vector<std::shared_ptr<Node>> doomed;
  thread_local bool draining = false;
  for (Edge& e : next_edges) {
    if (e.fn && e.fn.use_count() == 1) doomed.push_back(std::move(e.fn));
  }
  if (draining) return;
  draining = true;
  while (!doomed.empty()) {
    std::shared_ptr<Node> n = std::move(doomed.back());
    doomed.pop_back();
    n.reset();  // its destructor appends its own sole-owned inputs to `doomed`
  }
  draining = false;
}

void Node::release() {
  release_saved();
  released_ = true;
}

namespace detail {

Tensor detached_alias(const Tensor& t) {
  return make_view(t, t.shape(), t.strides(), t.storage_offset());
}

void check_version(const Tensor& saved, uint64_t version, std::string_view op, size_t index) {
  TG_CHECK(saved.storage()->version() == version, MisuseError,
           "backward of '{}': saved tensor {} (shape {}) was modified in place after it was "
           "saved (version {} -> {}); the gradient would be wrong. Clone it before modifying "
           "it, or do the in-place op under NoGradGuard before the forward",
           op, index, saved.shape(), version, saved.storage()->version());
}

void record(const std::shared_ptr<Node>& node, std::span<const Tensor* const> inputs,
            std::span<Tensor> outputs) {
  for (const Tensor* input : inputs) {
    const Tensor& in = *input;
    Edge e;
    if (in.defined() && in.requires_grad()) {
      if (in.grad_fn()) {
        e.fn = in.grad_fn();
        e.output_nr = in.impl()->output_nr;
      } else {
        e.leaf = in.shared_impl();
      }
    }
    node->next_edges.push_back(std::move(e));
    node->inputs.push_back(in.defined() ? TensorMeta{in.shape(), in.dtype()} : TensorMeta{});
  }
  for (uint32_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    node->outputs.push_back({out.shape(), out.dtype()});
    if (!is_floating_point(out.dtype())) continue;  // integer outputs carry no gradient
    // An op may return one of its inputs (or an output that already has history, e.g.
    // contiguous() of a contiguous tensor): give the output its own impl first.
    bool shared = out.impl()->grad_fn != nullptr || out.impl()->requires_grad;
    for (const Tensor* in : inputs) shared = shared || (in->defined() && in->impl() == out.impl());
    if (shared) out = detached_alias(out);
    out.impl()->grad_fn = node;
    out.impl()->output_nr = i;
    out.impl()->requires_grad = true;
  }
}

}  // namespace detail

// ---------------------------------------------------------------- Tensor's autograd methods

Tensor Tensor::grad() const {
  const TensorImpl& t = checked();
  TG_CHECK(t.grad_fn == nullptr || t.retains_grad, MisuseError,
           "grad: this tensor is not a leaf (it was made by '{}'), and backward fills .grad only "
           "for leaves; call retain_grad() on it before backward to keep its gradient",
           t.grad_fn->name());
  return Tensor(t.grad);
}

void Tensor::retain_grad() const {
  const TensorImpl& t = checked();
  TG_CHECK(t.requires_grad, MisuseError,
           "retain_grad: the tensor does not require grad, so it will never get a gradient");
  if (t.grad_fn == nullptr || t.retains_grad) return;  // leaves keep theirs anyway
  impl_->retains_grad = true;
  std::weak_ptr<TensorImpl> weak = impl_;
  t.grad_fn->pre_hooks.push_back({t.output_nr, [weak](const Tensor& g) {
                                    if (auto impl = weak.lock()) {
                                      if (!impl->grad) impl->grad = g.clone().shared_impl();
                                      else {
                                        Tensor acc(impl->grad);
                                        detail::add_into(acc, g);
                                      }
                                    }
                                    return Tensor();
                                  }});
}

void Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  const TensorImpl& t = checked();
  TG_CHECK(t.requires_grad, MisuseError,
           "register_hook: the tensor does not require grad, so no gradient will flow through "
           "it; call requires_grad_() on the leaf first");
  if (t.grad_fn) t.grad_fn->pre_hooks.push_back({t.output_nr, std::move(hook)});
  else impl_->hooks.push_back(std::move(hook));
}

void Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
  const TensorImpl& t = checked();
  TG_CHECK(t.requires_grad && t.grad_fn == nullptr, MisuseError,
           "register_post_accumulate_grad_hook: only a leaf that requires grad gets a .grad to "
           "accumulate into, but this tensor {}",
           t.grad_fn ? fmt::format("was made by '{}'", t.grad_fn->name())
                     : std::string("does not require grad"));
  impl_->post_accumulate_hooks.push_back(std::move(hook));
  detail::note_post_accumulate_hook();
}

Tensor Tensor::detach() const { return detail::detached_alias(*this); }

}  // namespace tg
