// core/leaf_grads.cpp — adding gradients (the engine's sums, and .grad += g), and the offer
// of an existing .grad to a backward (core/leaf_grads.h).
#include "core/leaf_grads.h"

#include <atomic>
#include <unordered_set>

#include "core/parallel.h"
#include "core/simd.h"
#include "core/strided_loop.h"

namespace tg::detail {
namespace {

// dst += src elementwise (same shape), in dst's dtype; 16-bit types are added in float.
void add_strided(Tensor& dst, const Tensor& src) {
  visit_dtype(dst.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) {
      raise<DTypeError>("backward: cannot accumulate gradients of dtype {}", dst.dtype());
    } else {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const Tensor s = src.dtype() == dst.dtype() ? src : src.to(dst.dtype());
      T* d = dst.data<T>();
      const T* p = s.data<T>();
      for_each_offset<2>(dst.shape(), {&dst.strides(), &s.strides()}, [&](const auto& o) {
        d[o[0]] = convert<T>(static_cast<C>(convert<C>(d[o[0]]) + convert<C>(p[o[1]])));
      });
    }
  });
}

// d[i] += s[i] over separate contiguous arrays, vectorised (core/simd.h). Each element is one
// add, so the bits are those of add_strided.
template <class T>
[[gnu::noinline]] void add_span(T* __restrict d, const T* __restrict s, int64_t n) {
  simd_for(n, [&](int64_t i) { d[i] += s[i]; });
}

std::atomic<bool> post_accumulate_hooks{false};

}  // namespace

void note_post_accumulate_hook() { post_accumulate_hooks.store(true, std::memory_order_relaxed); }
bool post_accumulate_hooks_registered() {
  return post_accumulate_hooks.load(std::memory_order_relaxed);
}

void add_into(Tensor& dst, const Tensor& src) {
  // The common case of big gradients: both contiguous float32 or float64, separate memory.
  if (dst.dtype() == src.dtype() && (dst.dtype() == kFloat32 || dst.dtype() == kFloat64) &&
      dst.is_contiguous() && src.is_contiguous() && dst.shape() == src.shape() &&
      dst.storage() != src.storage()) {
    visit_dtype(dst.dtype(), [&]<class T>() {
      if constexpr (std::is_floating_point_v<T>) {
        T* d = dst.data<T>();
        const T* s = src.data<T>();
        parallel_rows(dst.numel(), 3, [&](int64_t begin, int64_t end) {
          add_span(d + begin, s + begin, end - begin);
        });
      }
    });
    return;
  }
  add_strided(dst, src);
}

void LeafGradDestinations::begin(const Node& node, const std::vector<Tensor>& grads) {
  node_ = &node;
  grads_ = &grads;
  offered_.assign(node.next_edges.size(), Tensor());
}

Tensor LeafGradDestinations::existing_grad(size_t input) {
  if (!enabled_ || node_ == nullptr || input >= offered_.size()) return {};
  const Edge& e = node_->next_edges[input];
  if (!e.leaf || !e.leaf->hooks.empty() || !e.leaf->post_accumulate_hooks.empty()) return {};
  const Tensor g = Tensor(e.leaf).grad();
  if (!g.defined() || !g.is_contiguous() || uses(e.leaf.get()) != 1) return {};
  for (const Tensor& read : *grads_) {
    if (read.defined() && read.storage() == g.storage()) return {};
  }
  offered_[input] = g;
  return g;
}

void LeafGradDestinations::take_delivered(std::vector<Tensor>& input_grads) {
  for (size_t i = 0; i < offered_.size() && i < input_grads.size(); ++i) {
    if (offered_[i].defined() && input_grads[i].defined() &&
        input_grads[i].impl() == offered_[i].impl()) {
      input_grads[i] = Tensor();
    }
  }
  node_ = nullptr;
}

int LeafGradDestinations::uses(const TensorImpl* leaf) {
  if (!counted_) {
    std::vector<const Node*> stack;
    std::unordered_set<const Node*> seen;
    for (const Tensor& r : roots_) {
      if (r.grad_fn() && seen.insert(r.grad_fn().get()).second) {
        stack.push_back(r.grad_fn().get());
      }
      if (!r.grad_fn()) ++uses_[r.impl()];
    }
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges) {
        if (e.leaf) ++uses_[e.leaf.get()];
        if (e.fn && seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
      }
    }
    counted_ = true;
  }
  const auto it = uses_.find(leaf);
  return it == uses_.end() ? 0 : it->second;
}

}  // namespace tg::detail
