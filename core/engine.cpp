// core/engine.cpp — running backward over the tape: tg::backward and tg::grad.
//
// One pass, in four steps per node (Engine::run):
//   1. order: take the latest node on the tape that has received gradients, with their sum;
//   2. call its backward;
//   3. accumulate: send each input's gradient to the node that made that input, or add it
//      to its leaf's sum;
//   4. release what the node saved (unless the graph is retained).
// Leaves get their summed gradient once (hooks, then .grad, then post-accumulate hooks): after
// the replay, or, once any leaf has a post-accumulate hook, as soon as the last edge into the
// leaf has delivered, so that such a hook (DistributedDataParallel's all-reduce) runs while the
// rest of the backward goes on. Queued callbacks (tg::queue_backward_callback) run last.
#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <utility>

#include "core/autograd.h"
#include "core/factories.h"
#include "core/leaf_grads.h"
#include "core/strided_loop.h"

namespace tg {
namespace {

using detail::add_into;
using detail::LeafGradDestinations;

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

// What a hook returned, checked like PyTorch checks it: undefined keeps the gradient, anything
// else must have the gradient's shape and dtype. Never broadcast, never converted: a hook
// that changed either is a bug, and the kernels downstream trust the size they are given.
// `what` names the hook for the message.
Tensor checked_hook_result(Tensor replaced, const Tensor& g, const std::string& what) {
  if (!replaced.defined()) return g;
  TG_CHECK(replaced.shape() == g.shape(), ShapeError,
           "backward: {} returned a gradient of shape {}, but the gradient it was given has "
           "shape {}; a hook must return a tensor of the same shape (or an undefined Tensor to "
           "keep the gradient)",
           what, replaced.shape(), g.shape());
  TG_CHECK(replaced.dtype() == g.dtype(), DTypeError,
           "backward: {} returned a gradient of dtype {}, but the gradient it was given is {}; a "
           "hook must return a tensor of the same dtype (convert it with .to())",
           what, replaced.dtype(), g.dtype());
  return replaced;
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
struct Engine;
thread_local Engine* running_engine = nullptr;  // the pass queue_backward_callback adds to

struct Engine {
  bool retain_graph = false;
  bool capturing = false;
  // Captured tensors: leaves by impl, non-leaves by (node, output_nr).
  std::unordered_map<const TensorImpl*, size_t> leaf_capture;
  std::unordered_map<const Node*, std::vector<std::pair<uint32_t, size_t>>> node_capture;
  std::vector<Tensor> captured;

  std::vector<Message> queue;  // a heap under ReceivedLater
  uint64_t sent = 0;
  // Gradients reaching leaves, summed over every edge into the leaf, and delivered once: a
  // leaf is the end of every path through it. `remaining` counts the edges still to deliver
  // when leaves are delivered early (deliver_early), and is unused otherwise.
  struct LeafSum {
    std::shared_ptr<TensorImpl> leaf;
    GradSum grad;
    int remaining = 0;
    bool delivered = false;
  };
  std::vector<LeafSum> leaf_grads;
  std::unordered_map<const TensorImpl*, size_t> leaf_index;
  bool deliver_early = false;
  LeafGradDestinations* offers = nullptr;        // run()'s, for their count of each leaf's uses
  std::vector<std::function<void()>> callbacks;  // queue_backward_callback's

  void run(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads) {
    LeafGradDestinations leaf_destinations(roots, !capturing && !anomaly_mode_enabled());
    offers = &leaf_destinations;
    deliver_early = !capturing && detail::post_accumulate_hooks_registered();
    Engine* outer = std::exchange(running_engine, this);
    struct Restore {
      Engine* outer;
      ~Restore() { running_engine = outer; }
    } restore{outer};
    const std::vector<std::shared_ptr<Node>> hold = seed(roots, root_grads);
    NoGradGuard no_grad;  // backward computes values; it records nothing
    // and casts nothing: each backward runs in the dtypes its forward saved (core/autocast.h)
    AutocastGuard no_autocast(autocast_dtype(), /*enabled=*/false);
    std::vector<Tensor> grads;  // reused from node to node
    while (!queue.empty()) {
      Node& node = *queue.front().node;
      // 1. The latest node on the tape that has received gradients, with their sums.
      receive_all(node, grads);
      // 2. Its backward.
      std::vector<Tensor> input_grads = call_backward(node, grads, leaf_destinations);
      // 3. Its inputs' gradients, on to where they accumulate.
      send_on(node, input_grads);
      // 4. What it saved, freed.
      if (!retain_graph) node.release();
    }
    // Moved out, so that a sum nobody else holds can become the .grad without a copy.
    for (LeafSum& l : leaf_grads) {
      if (!l.delivered) deliver_to_leaf(l.leaf, std::move(l.grad.sum));
    }
    // A callback may queue another: run them until none is left.
    for (size_t i = 0; i < callbacks.size(); ++i) {
      std::function<void()> callback = std::move(callbacks[i]);
      callback();
    }
  }

  // The roots' gradients, sent; returns the roots' nodes, which own the whole graph and must
  // live for the pass (messages point at nodes with raw pointers).
  std::vector<std::shared_ptr<Node>> seed(const std::vector<Tensor>& roots,
                                          const std::vector<Tensor>& root_grads) {
    std::vector<std::shared_ptr<Node>> root_nodes;
    for (size_t i = 0; i < roots.size(); ++i) {
      if (roots[i].grad_fn()) {
        root_nodes.push_back(roots[i].grad_fn());
        send(roots[i].grad_fn().get(), roots[i].impl()->output_nr, root_grads[i]);
      } else {
        add_leaf(roots[i].shared_impl(), root_grads[i]);
      }
    }
    return root_nodes;
  }

  void send(Node* node, uint32_t output_nr, Tensor g) {
    queue.push_back({node, output_nr, sent++, std::move(g)});
    std::push_heap(queue.begin(), queue.end(), ReceivedLater{});
  }

  // Every message for `node` (they are at the front of the queue together), summed per
  // output into `grads`: one gradient per output, undefined where none arrived.
  std::vector<GradSum> sums;  // reused from node to node
  void receive_all(const Node& node, std::vector<Tensor>& grads) {
    sums.assign(node.outputs.size(), GradSum{});
    while (!queue.empty() && queue.front().node == &node) {
      std::pop_heap(queue.begin(), queue.end(), ReceivedLater{});
      Message m = std::move(queue.back());
      queue.pop_back();
      sums[m.output_nr].add(m.grad);
    }
    grads.clear();
    for (GradSum& s : sums) grads.push_back(std::move(s.sum));
  }

  std::vector<Tensor> call_backward(Node& node, std::vector<Tensor>& grads,
                                    LeafGradDestinations& destinations) {
    TG_CHECK(!node.released(), MisuseError,
             "backward: trying to backward through the graph a second time: the tensors saved "
             "by '{}' were freed by the first backward. Pass retain_graph=true to the first "
             "backward if you need to run it again",
             node.name());
    for (size_t h = 0; h < node.pre_hooks.size(); ++h) {
      const auto& [output_nr, hook] = node.pre_hooks[h];
      if (!grads[output_nr].defined()) continue;
      grads[output_nr] =
          checked_hook_result(hook(grads[output_nr]), grads[output_nr],
                              fmt::format("hook {} on output {} of '{}' (called at {})", h,
                                          output_nr, node.name(), describe(node.where())));
    }
    if (auto c = node_capture.find(&node); c != node_capture.end()) {
      for (auto [output_nr, index] : c->second) {
        if (grads[output_nr].defined()) add_captured(index, grads[output_nr]);
      }
    }
    // An output nothing flowed back to contributes zero (a backward sees every slot filled).
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined()) grads[i] = zeros(node.outputs[i].shape, node.outputs[i].dtype);
    }
    destinations.begin(node, grads);
    std::vector<Tensor> input_grads = [&] {
      detail::ProfileScope profile(node.name(), "backward");
      return node.apply(grads, &destinations);
    }();
    destinations.take_delivered(input_grads);
    check_input_grads(node, input_grads);
    return input_grads;
  }

  // Each input's gradient goes to the node that made that input (it comes earlier on the
  // tape, so the loop reaches it later), or, for a leaf, into the leaf's sum.
  void send_on(const Node& node, std::vector<Tensor>& input_grads) {
    // exercise autograd.reverse_loop: begin
    for (size_t i = 0; i < input_grads.size(); ++i) {
      const Edge& e = node.next_edges[i];
      if (!input_grads[i].defined()) continue;
      if (e.fn) send(e.fn.get(), e.output_nr, std::move(input_grads[i]));
      else if (e.leaf) add_leaf(e.leaf, std::move(input_grads[i]));
    }
    // exercise autograd.reverse_loop: end
  }

  void add_leaf(const std::shared_ptr<TensorImpl>& leaf, Tensor g) {
    auto [it, fresh] = leaf_index.try_emplace(leaf.get(), leaf_grads.size());
    if (fresh) {
      const int uses = deliver_early ? offers->uses(leaf.get()) : 0;
      leaf_grads.push_back({leaf, GradSum{}, uses});
    }
    LeafSum& l = leaf_grads[it->second];
    l.grad.add(g);
    g = Tensor();  // only the sum holds it now, so that it can become the .grad without a copy
    // Every edge into the leaf has delivered: its gradient is complete, deliver it now. (An
    // edge whose backward sent nothing leaves the count above zero; run() delivers at the end.)
    if (deliver_early && --l.remaining == 0) {
      l.delivered = true;
      deliver_to_leaf(l.leaf, std::move(l.grad.sum));
    }
  }

  void add_captured(size_t index, const Tensor& g) {
    Tensor& slot = captured[index];
    if (!slot.defined()) slot = own(g);
    else add_into(slot, g);
  }

  void deliver_to_leaf(const std::shared_ptr<TensorImpl>& leaf_impl, Tensor g) {
    for (size_t h = 0; h < leaf_impl->hooks.size(); ++h) {
      g = checked_hook_result(leaf_impl->hooks[h](g), g,
                              fmt::format("hook {} on a leaf tensor of shape {} ({})", h,
                                          leaf_impl->shape, leaf_impl->dtype));
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
    for (const auto& hook : leaf_impl->post_accumulate_hooks) hook(leaf);
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

void queue_backward_callback(std::function<void()> callback) {
  TG_CHECK(running_engine != nullptr, MisuseError,
           "queue_backward_callback: no backward is running; queue the callback from a hook, "
           "during backward");
  TG_CHECK(callback != nullptr, ValueError, "queue_backward_callback: the callback is empty");
  running_engine->callbacks.push_back(std::move(callback));
}

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

void Tensor::backward(const Tensor& grad, bool retain_graph) const {
  tg::backward(*this, grad, retain_graph);
}

}  // namespace tg
