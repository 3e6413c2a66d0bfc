// core/autograd.cpp — recording nodes and running backward over the tape.
#include "core/autograd.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "core/broadcast.h"
#include "core/factories.h"
#include "core/parallel.h"
#include "core/strided_loop.h"

namespace tg {
namespace {

thread_local bool t_grad_mode = true;
thread_local bool t_anomaly_mode = false;
std::atomic<uint64_t> g_next_sequence_nr{0};

// dst += src, elementwise (same shape), in dst's dtype. Used to sum gradients.
void accumulate(Tensor& dst, const Tensor& src) {
  visit_dtype(dst.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) {
      detail::raise<DTypeError>("backward: cannot accumulate gradients of dtype {}", dst.dtype());
    } else {
      const Tensor s = src.dtype() == dst.dtype() ? src : src.to(dst.dtype());
      T* d = dst.data<T>();
      const T* p = s.data<T>();
      detail::for_each_offset<2>(dst.shape(), {&dst.strides(), &s.strides()}, [&](const auto& o) {
        d[o[0]] = convert<T>(convert<float>(d[o[0]]) + convert<float>(p[o[1]]));
      });
    }
  });
}

// d[i] += s[i] for i in [0, n): blocks of 16 with __restrict pointers, which GCC
// vectorises at -O2 (ops/vector_math.h explains why), shared by threads in ranges. Each
// element is one add, so the result is the same bits as the strided loops below.
template <class T>
void add_contiguous(T* d, const T* s, int64_t n) {
  parallel_for(n, 1 << 16, [&](int64_t begin, int64_t end) {
    T* __restrict dp = d + begin;
    const T* __restrict sp = s + begin;
    const int64_t m = end - begin;
    int64_t i = 0;
    for (; i + 16 <= m; i += 16) {
      for (int64_t j = 0; j < 16; ++j) dp[i + j] += sp[i + j];
    }
    for (; i < m; ++i) dp[i] += sp[i];
  });
}

// f64 accumulates in double; the loop above widens 16-bit types to float.
void add_into(Tensor& dst, const Tensor& src) {
  // The common case of big gradients: both contiguous float32 or float64, separate memory.
  if (dst.dtype() == src.dtype() && (dst.dtype() == kFloat32 || dst.dtype() == kFloat64) &&
      dst.is_contiguous() && src.is_contiguous() && dst.shape() == src.shape() &&
      dst.storage() != src.storage()) {
    if (dst.dtype() == kFloat32) add_contiguous(dst.data<float>(), src.data<float>(), dst.numel());
    else add_contiguous(dst.data<double>(), src.data<double>(), dst.numel());
    return;
  }
  if (dst.dtype() == kFloat64) {
    double* d = dst.data<double>();
    const Tensor s = src.dtype() == kFloat64 ? src : src.to(kFloat64);
    const double* p = s.data<double>();
    detail::for_each_offset<2>(dst.shape(), {&dst.strides(), &s.strides()},
                               [&](const auto& o) { d[o[0]] += p[o[1]]; });
  } else {
    accumulate(dst, src);
  }
}

bool has_non_finite(const Tensor& t) {
  bool bad = false;
  visit_dtype(t.dtype(), [&]<class T>() {
    const T* p = t.data<T>();
    detail::for_each_offset<1>(t.shape(), {&t.strides()}, [&](const auto& o) {
      bad = bad || !std::isfinite(convert<double>(p[o[0]]));
    });
  });
  return bad;
}

std::string describe(const Here& where) {
  if (where.line() == 0) return "an unrecorded location (call the op's apply_at to record it)";
  return fmt::format("{}:{} in {}", where.file_name(), where.line(), where.function_name());
}

// A gradient that is about to be kept somewhere we will later add into: make it ours.
Tensor own(const Tensor& g) { return g.clone(); }

// Whether g can become a leaf's .grad as it is, instead of a copy: no other handle points to
// it and no other tensor to its memory (so a later `.grad += ...` changes nothing anyone else
// sees), it is contiguous, and it is no part of a graph (create_graph). PyTorch's
// AccumulateGrad takes a gradient over on similar terms. Most gradients qualify: a backward
// returns a fresh tensor that only the engine holds, and copying it would only cost time.
bool unshared(const Tensor& g) {
  return g.shared_impl().use_count() == 1 && g.storage().use_count() == 1 && !g.requires_grad() &&
         !g.grad_fn() && g.is_contiguous();
}

// The sum of the gradients arriving at one place. The first one is kept as is (often the
// only one); before adding a second in place, the slot takes a private copy, because a
// backward may hand the same tensor to several inputs (add returns dout twice), and the
// first may even be the caller's upstream gradient.
struct GradSum {
  Tensor sum;
  bool owned = false;
  void add(const Tensor& g) {
    // exercise autograd.reverse_loop: begin
    if (!sum.defined()) {
      sum = g;
      return;
    }
    if (!owned) {
      sum = own(sum);
      owned = true;
    }
    add_into(sum, g);
    // exercise autograd.reverse_loop: end
  }
};

// A gradient on its way to output `output_nr` of `node`, sent by a backward that already
// ran (or by the caller, for a root).
struct Message {
  Node* node;
  uint32_t output_nr;
  uint64_t sent;  // 0, 1, 2, ... in the order the engine sent them
  Tensor grad;
};

// The order in which the engine receives messages, as a "less than" for std::push_heap
// (which keeps the largest element in front): the latest node on the tape first; for one
// node, the messages in the order they were sent, so a sum of several arrives in the same
// order on every run.
struct ReceivedLater {
  bool operator()(const Message& a, const Message& b) const {
    if (a.node->sequence_nr() != b.node->sequence_nr()) {
      return a.node->sequence_nr() < b.node->sequence_nr();
    }
    return a.sent > b.sent;
  }
};

// One backward pass. Without captures, gradients reaching leaves go into their .grad;
// with captures (tg::grad), they are returned for the captured tensors instead and no
// .grad is touched.
//
// The pass is driven by one priority queue of messages (gradients in flight), ordered by
// the receiving node's place on the tape, latest first. Popping the front gives the
// latest node that has received anything; every node that can still send to it comes
// later on the tape (it used this node's output), so it has already run and all of this
// node's messages are at the front together. Sum them, run the node's backward, and send
// its input gradients on: that is reverse tape order over exactly the nodes that the
// roots depend on, found as the gradients flow, with no separate graph walk, no sort and
// no hash table per node.
struct Engine {
  bool retain_graph = false;
  bool capturing = false;
  // Captured tensors: leaves by impl, non-leaves by (node, output_nr).
  std::unordered_map<const TensorImpl*, size_t> leaf_capture;
  std::unordered_map<const Node*, std::vector<std::pair<uint32_t, size_t>>> node_capture;
  std::vector<Tensor> captured;

  std::vector<Message> queue;  // a heap under ReceivedLater
  uint64_t sent = 0;
  // Gradients reaching leaves, summed over every edge into the leaf, and delivered once
  // (hooks, then .grad) after the replay: a leaf is the end of every path through it.
  std::vector<std::pair<std::shared_ptr<TensorImpl>, GradSum>> leaf_grads;
  std::unordered_map<const TensorImpl*, size_t> leaf_index;

  void add_leaf(const std::shared_ptr<TensorImpl>& leaf, const Tensor& g) {
    auto [it, fresh] = leaf_index.try_emplace(leaf.get(), leaf_grads.size());
    if (fresh) leaf_grads.push_back({leaf, GradSum{}});
    leaf_grads[it->second].second.add(g);
  }

  // A raw pointer is enough: the roots own every node they depend on for the whole pass
  // (run() keeps them), and backward never cuts an edge (release() frees saved tensors).
  void send(Node* node, uint32_t output_nr, Tensor g) {
    queue.push_back({node, output_nr, sent++, std::move(g)});
    std::push_heap(queue.begin(), queue.end(), ReceivedLater{});
  }

  Message receive() {
    std::pop_heap(queue.begin(), queue.end(), ReceivedLater{});
    Message m = std::move(queue.back());
    queue.pop_back();
    return m;
  }

  void add_captured(size_t index, const Tensor& g) {
    Tensor& slot = captured[index];
    if (!slot.defined()) slot = own(g);
    else add_into(slot, g);
  }

  void deliver_to_leaf(const std::shared_ptr<TensorImpl>& leaf_impl, Tensor g) {
    for (const auto& hook : leaf_impl->hooks) {
      Tensor replaced = hook(g);
      if (replaced.defined()) g = replaced;
    }
    if (capturing) {
      if (auto it = leaf_capture.find(leaf_impl.get()); it != leaf_capture.end()) {
        add_captured(it->second, g);
      }
      return;
    }
    Tensor leaf(leaf_impl);
    if (!leaf.grad().defined()) {
      leaf.set_grad(unshared(g) ? std::move(g) : own(g).detach());
    } else {
      Tensor acc = leaf.grad();
      add_into(acc, g);
    }
  }

  void run(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads) {
    // 1. Seed the roots' gradients (and hold the roots' nodes: they own the whole graph).
    std::vector<std::shared_ptr<Node>> root_nodes;
    for (size_t i = 0; i < roots.size(); ++i) {
      if (roots[i].grad_fn()) {
        root_nodes.push_back(roots[i].grad_fn());
        send(roots[i].grad_fn().get(), roots[i].impl()->output_nr, root_grads[i]);
      } else {
        add_leaf(roots[i].shared_impl(), root_grads[i]);
      }
    }

    // 2. Replay, latest node first. `sums` and `grads` are reused from node to node.
    NoGradGuard no_grad;  // backward computes values; it records nothing
    std::vector<GradSum> sums;
    std::vector<Tensor> grads;
    while (!queue.empty()) {
      Node* node = queue.front().node;
      sums.assign(node->outputs.size(), GradSum{});
      while (!queue.empty() && queue.front().node == node) {
        Message m = receive();
        sums[m.output_nr].add(m.grad);
      }
      grads.clear();
      for (GradSum& s : sums) grads.push_back(std::move(s.sum));
      TG_CHECK(!node->released(), MisuseError,
               "backward: trying to backward through the graph a second time: the tensors "
               "saved by '{}' were freed by the first backward. Pass retain_graph=true to "
               "the first backward if you need to run it again",
               node->name());
      for (const auto& [output_nr, hook] : node->pre_hooks) {
        if (!grads[output_nr].defined()) continue;
        Tensor replaced = hook(grads[output_nr]);
        if (replaced.defined()) grads[output_nr] = replaced;
      }
      if (auto c = node_capture.find(node); c != node_capture.end()) {
        for (auto [output_nr, index] : c->second) {
          if (grads[output_nr].defined()) add_captured(index, grads[output_nr]);
        }
      }
      for (size_t i = 0; i < grads.size(); ++i) {
        if (!grads[i].defined()) grads[i] = zeros(node->outputs[i].shape, node->outputs[i].dtype);
      }

      offer_grad_destinations(*node, roots);
      std::vector<Tensor> input_grads = node->apply(grads);
      take_delivered(*node, input_grads);
      check_input_grads(*node, input_grads);

      // Send each input's gradient on: to the node that made that input (it comes earlier on
      // the tape, so the loop reaches it later), or, for a leaf, into the leaf's sum.
      // exercise autograd.reverse_loop: begin
      for (size_t i = 0; i < input_grads.size(); ++i) {
        const Edge& e = node->next_edges[i];
        if (!input_grads[i].defined()) continue;
        if (e.fn) send(e.fn.get(), e.output_nr, std::move(input_grads[i]));
        else if (e.leaf) add_leaf(e.leaf, input_grads[i]);
      }
      // exercise autograd.reverse_loop: end
      if (!retain_graph) node->release();
    }
    // Moved out, so that a sum nobody else holds can become the .grad without a copy.
    for (auto& [leaf, g] : leaf_grads) deliver_to_leaf(leaf, std::move(g.sum));
  }

  // Leaves reached through exactly one edge (or root) of this graph, counted the first time
  // an op asks for a gradient destination (see Context::grad_destination).
  std::unordered_map<const TensorImpl*, int> leaf_uses;
  bool leaf_uses_counted = false;

  // For an op that can add into a .grad itself: offer input i's leaf .grad when that gives
  // the same sum as returning the gradient (one edge into the leaf, nothing that must see
  // the gradient alone, a .grad with the input's layout).
  void offer_grad_destinations(Node& node, const std::vector<Tensor>& roots) {
    node.grad_destinations.clear();
    if (!node.adds_into_grad() || capturing || anomaly_mode_enabled()) return;
    if (!leaf_uses_counted) {
      // One walk over the whole graph (with a stack, never recursion), the first time only.
      // Nodes that already ran keep their edges (release() frees saved tensors only).
      std::vector<const Node*> stack;
      std::unordered_set<const Node*> seen;
      for (const Tensor& r : roots) {
        if (r.grad_fn() && seen.insert(r.grad_fn().get()).second)
          stack.push_back(r.grad_fn().get());
      }
      while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        for (const Edge& e : n->next_edges) {
          if (e.leaf) ++leaf_uses[e.leaf.get()];
          if (e.fn && seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
        }
      }
      for (const Tensor& r : roots) {
        if (!r.grad_fn()) ++leaf_uses[r.impl()];
      }
      leaf_uses_counted = true;
    }
    node.grad_destinations.resize(node.next_edges.size());
    for (size_t i = 0; i < node.next_edges.size(); ++i) {
      const Edge& e = node.next_edges[i];
      if (!e.leaf || !e.leaf->hooks.empty() || leaf_uses[e.leaf.get()] != 1) continue;
      const Tensor g = Tensor(e.leaf).grad();
      if (g.defined() && g.dtype() == node.inputs[i].dtype && g.shape() == node.inputs[i].shape &&
          g.is_contiguous()) {
        node.grad_destinations[i] = g;
      }
    }
  }

  // A gradient returned as its own destination is already in the leaf's .grad.
  static void take_delivered(Node& node, std::vector<Tensor>& grads) {
    for (size_t i = 0; i < node.grad_destinations.size() && i < grads.size(); ++i) {
      const Tensor& d = node.grad_destinations[i];
      if (d.defined() && grads[i].defined() && grads[i].impl() == d.impl()) grads[i] = Tensor();
    }
    node.grad_destinations.clear();
  }

  void check_input_grads(const Node& node, std::vector<Tensor>& grads) const {
    TG_CHECK(grads.size() == node.next_edges.size(), Error,
             "backward of '{}' returned {} gradients, but the op has {} tensor inputs (one slot "
             "per input, undefined where no gradient is needed)",
             node.name(), grads.size(), node.next_edges.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      Tensor& g = grads[i];
      const Edge& e = node.next_edges[i];
      if (!g.defined() || (!e.fn && !e.leaf)) {
        g = Tensor();
        continue;
      }
      const TensorMeta& in = node.inputs[i];
      TG_CHECK(g.shape() == in.shape, ShapeError,
               "backward of '{}' returned a gradient of shape {} for input {}, which has shape {}",
               node.name(), g.shape(), i, in.shape);
      if (g.dtype() != in.dtype) g = g.to(in.dtype);
      if (anomaly_mode_enabled() && has_non_finite(g)) {
        detail::raise<ValueError>(
            "anomaly: the backward of '{}' produced a non-finite value (NaN or Inf) in the "
            "gradient of its input {}; that op was called at {}",
            node.name(), i, describe(node.where()));
      }
    }
  }
};

void check_root(const Tensor& root, const char* op) {
  TG_CHECK(root.defined(), MisuseError, "{}: the output tensor is undefined", op);
  TG_CHECK(root.requires_grad(), MisuseError,
           "{}: the tensor of shape {} does not require grad and has no grad_fn: nothing on the "
           "tape leads to it. Did you forget requires_grad_() on a leaf, or compute it under "
           "NoGradGuard?",
           op, root.shape());
}

Tensor root_gradient(const Tensor& root, const Tensor& grad, const char* op) {
  if (!grad.defined()) {
    TG_CHECK(root.numel() == 1, MisuseError,
             "{}: a gradient can be created implicitly only for a scalar output, but the output "
             "has shape {}; pass the upstream gradient explicitly",
             op, root.shape());
    return ones(root.shape(), root.dtype());
  }
  TG_CHECK(grad.shape() == root.shape(), ShapeError,
           "{}: the upstream gradient of shape {} does not match the output of shape {}", op,
           grad.shape(), root.shape());
  return grad.dtype() == root.dtype() ? grad : grad.to(root.dtype());
}

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

void backward(const Tensor& root, const Tensor& grad, bool retain_graph) {
  check_root(root, "backward");
  Engine engine;
  engine.retain_graph = retain_graph;
  engine.run({root}, {root_gradient(root, grad, "backward")});
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool allow_unused) {
  TG_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), ValueError,
           "grad: {} grad_outputs for {} outputs", grad_outputs.size(), outputs.size());
  Engine engine;
  engine.retain_graph = retain_graph;
  engine.capturing = true;
  engine.captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    TG_CHECK(in.defined() && in.requires_grad(), MisuseError,
             "grad: input {} does not require grad, so it has no gradient; call "
             "requires_grad_() on it before the forward",
             i);
    if (in.grad_fn()) {
      engine.node_capture[in.grad_fn().get()].push_back({in.impl()->output_nr, i});
    } else {
      engine.leaf_capture[in.impl()] = i;
    }
  }
  std::vector<Tensor> seeds;
  for (size_t i = 0; i < outputs.size(); ++i) {
    check_root(outputs[i], "grad");
    seeds.push_back(
        root_gradient(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], "grad"));
  }
  engine.run(outputs, seeds);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TG_CHECK(allow_unused || engine.captured[i].defined(), MisuseError,
             "grad: input {} (shape {}) was not used to compute the outputs; pass "
             "allow_unused=true to get an undefined gradient for it instead",
             i, inputs[i].shape());
  }
  return engine.captured;
}

// ---------------------------------------------------------------- Tensor's autograd methods

Tensor Tensor::grad() const {
  const TensorImpl& t = checked();
  TG_CHECK(t.grad_fn == nullptr || t.retains_grad, MisuseError,
           "grad: this tensor is not a leaf (it was made by '{}'), and backward fills .grad only "
           "for leaves; call retain_grad() on it before backward to keep its gradient",
           t.grad_fn->name());
  return Tensor(t.grad);
}

void Tensor::backward(const Tensor& grad, bool retain_graph) const {
  tg::backward(*this, grad, retain_graph);
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
                                        add_into(acc, g);
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

Tensor Tensor::detach() const { return detail::detached_alias(*this); }

}  // namespace tg
