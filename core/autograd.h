// core/autograd.h — the tape, the Function/Context API, and backward.
//
// How tapegrad differentiates a program, in four sentences:
//   1. Every differentiable op is a Function: a forward that computes outputs from inputs
//      and a hand-written backward that turns d(loss)/d(outputs) into d(loss)/d(inputs).
//   2. When grad mode is on and an input requires grad, Function::apply records a Node
//      for the call: its place on the tape (a global sequence number that grows with
//      every recorded op), edges to the nodes (or leaves) its inputs came from, and
//      whatever its forward saved in the Context.
//   3. tg::backward(loss) replays the nodes that loss depends on in reverse tape order —
//      a node always ran after the nodes that made its inputs, so when its turn comes
//      every gradient flowing into it has already arrived.
//   4. Each node's input gradients are summed into the node (or leaf) they flow to; at a
//      leaf that requires grad they are added into .grad.
//
// Ownership: a tensor owns the node that made it (grad_fn), a node owns the nodes of its
// inputs. Saved tensors are stored as detached aliases (same storage, no grad_fn), so a
// node that saves its own output does not keep itself alive.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/autocast.h"
#include "core/factories.h"
#include "core/profiler.h"
#include "core/recycling_allocator.h"
#include "core/small_vector.h"
#include "core/tensor.h"

namespace tg {

// ---------------------------------------------------------------- modes
/// Whether ops record onto the tape (thread-local, on by default).
bool grad_mode_enabled();
void set_grad_mode(bool enabled);

/// Records nothing and saves nothing while alive, like `with torch.no_grad():`.
class NoGradGuard {
 public:
  NoGradGuard() : previous_(grad_mode_enabled()) { set_grad_mode(false); }
  ~NoGradGuard() { set_grad_mode(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

bool anomaly_mode_enabled();
/// While alive, backward checks every gradient it computes for NaN and Inf, and throws
/// naming the op whose backward produced it and where in your source that op was called.
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

// ---------------------------------------------------------------- nodes
class Node;

/// Sees (and may replace) a gradient as it flows; return an undefined Tensor to keep it.
using Hook = std::function<Tensor(const Tensor&)>;

/// Where the gradient for one input of a node goes: output `output_nr` of node `fn` (the
/// input was made by an op), or the leaf tensor `leaf`, or nowhere (both null).
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t output_nr = 0;
  std::shared_ptr<TensorImpl> leaf;
};

/// Shape and dtype of a node's input or output: what its gradient must look like.
struct TensorMeta {
  Shape shape;
  DType dtype = DType::Float32;
};

/// Where a backward puts one input's gradient (Context::grad_buffer).
struct GradBuffer {
  Tensor tensor;     ///< undefined when the input needs no gradient
  bool add = false;  ///< tensor is the input's existing .grad: add into it, do not overwrite
};

namespace detail {
/// The engine's side of Context::grad_buffer (core/engine.cpp): the existing .grad that input
/// i's gradient may be added into directly, or an undefined tensor.
class GradDestinations {
 public:
  virtual Tensor existing_grad(size_t input) = 0;

 protected:
  ~GradDestinations() = default;
};
}  // namespace detail

/// One recorded op on the tape. Function<Op> makes these; the engine runs them.
class Node {
 public:
  Node(std::string_view name, Here where);
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// The op's backward: one gradient per output in (never undefined), one per input out.
  /// `destinations` (may be null) answers the backward's Context::grad_buffer.
  virtual std::vector<Tensor> apply(const std::vector<Tensor>& grad_outputs,
                                    detail::GradDestinations* destinations) = 0;
  /// Bytes of the tensors saved for backward.
  virtual size_t saved_bytes() const = 0;
  /// Frees what the forward saved (after a backward without retain_graph).
  void release();
  bool released() const { return released_; }

  std::string_view name() const { return name_; }
  /// Position on the tape: larger means recorded later.
  uint64_t sequence_nr() const { return sequence_nr_; }
  const Here& where() const { return where_; }

  // Most ops have one to three inputs and one output: these lists keep that many inside
  // the node (core/small_vector.h), so recording an op allocates the node and nothing else.
  SmallVector<Edge, 2> next_edges;     ///< one per input
  SmallVector<TensorMeta, 2> inputs;   ///< one per input
  SmallVector<TensorMeta, 1> outputs;  ///< one per output
  /// Hooks on the gradient of output i, run before apply (register_hook, retain_grad).
  std::vector<std::pair<uint32_t, Hook>> pre_hooks;

 protected:
  virtual void release_saved() = 0;

 private:
  std::string_view name_;
  Here where_;
  uint64_t sequence_nr_;
  bool released_ = false;
};

// ---------------------------------------------------------------- Function and Context
/// A state struct for ops that need none.
struct NoState {};

namespace detail {
template <class Op>
struct StateOf {
  using type = NoState;
};
template <class Op>
requires requires { typename Op::State; }
struct StateOf<Op> {
  using type = typename Op::State;
};
/// A detached alias: same storage and view, no autograd history.
Tensor detached_alias(const Tensor& t);
/// Throws MisuseError naming `op` if `saved` was modified in place since `version`.
void check_version(const Tensor& saved, uint64_t version, std::string_view op, size_t index);
/// dst += src, elementwise, for two gradients of one shape (core/leaf_grads.cpp).
void add_into(Tensor& dst, const Tensor& src);
}  // namespace detail

namespace detail {
template <class Op>
class FunctionNode;
}  // namespace detail

/// What a Function's forward hands to its backward, as in torch.autograd.Function:
/// tensors through save_for_backward(), everything else in the typed `state` member.
template <class State = NoState>
class Context {
 public:
  /// Keeps tensors for backward (does nothing when the call is not being recorded).
  template <class... Ts>
  void save_for_backward(const Ts&... tensors) {
    if (!recording_) return;
    (saved_.push_back({detail::detached_alias(tensors), tensors.storage()->version()}), ...);
  }
  /// The saved tensors, in order. Throws MisuseError if one was modified in place since.
  std::vector<Tensor> saved_tensors() const {
    std::vector<Tensor> out;
    for (size_t i = 0; i < saved_.size(); ++i) {
      detail::check_version(saved_[i].tensor, saved_[i].version, op_name_, i);
      out.push_back(saved_[i].tensor);
    }
    return out;
  }
  /// Whether input i (counting tensor arguments only) needs a gradient.
  bool needs_input_grad(size_t i) const { return i < needs_grad_.size() && needs_grad_[i]; }
  size_t saved_bytes() const {
    size_t n = 0;
    for (const auto& s : saved_)
      n += static_cast<size_t>(s.tensor.numel()) * s.tensor.element_size();
    return n;
  }
  void release() {
    saved_.clear();
    state = State{};
  }

  /// Named, typed non-tensor values the backward needs (dims, scales, flags).
  State state{};

  /// In backward: where to put input i's gradient, of `shape` in `dtype` (the dtype the
  /// op's kernel computes in). Usually a new, uninitialised tensor for the kernel to write.
  /// But when input i is a leaf whose .grad already exists with that shape and dtype, and
  /// the engine would do nothing with this gradient but add it there (no hook, no tg::grad
  /// capture, no anomaly check, no other path into the leaf), it is that .grad with `add`
  /// set: the kernel adds into it (the write rule of ops/kernels.h), and returning it in slot
  /// i tells the engine the gradient is delivered. That saves writing, reading and freeing a
  /// gradient-sized temporary: an embedding table's, say, when gradients accumulate over
  /// several backward passes. Undefined when input i needs no gradient.
  GradBuffer grad_buffer(size_t i, const Shape& shape, DType dtype) const {
    return grad_buffer(i, shape, dtype, [&] { return empty(shape, dtype); });
  }
  /// grad_buffer, with `make()` making the new tensor when one is needed (a layout of the
  /// op's choosing).
  template <class Make>
  GradBuffer grad_buffer(size_t i, const Shape& shape, DType dtype, Make&& make) const {
    if (!needs_input_grad(i)) return {};
    if (destinations_ != nullptr) {
      Tensor g = destinations_->existing_grad(i);
      bool usable = g.defined() && g.dtype() == dtype && g.shape() == shape;
      // The kernel must not write where it reads: no saved tensor may share the .grad's memory.
      for (const Saved& s : saved_) usable = usable && s.tensor.storage() != g.storage();
      if (usable) return {g, true};
    }
    return {make(), false};
  }

 private:
  template <class Op>
  friend struct Function;
  template <class Op>
  friend class detail::FunctionNode;
  struct Saved {
    Tensor tensor;
    uint64_t version;
  };
  bool recording_ = false;
  std::string_view op_name_;
  // Inline lists (core/small_vector.h): the context moves into the node, which lives
  // until backward, and a heap block per list per op is what a tiny op cannot afford.
  SmallVector<bool, 4> needs_grad_;
  SmallVector<Saved, 2> saved_;
  detail::GradDestinations* destinations_ = nullptr;  // set around backward only
};

namespace detail {
template <class T>
constexpr bool kIsTensor = std::is_same_v<std::remove_cvref_t<T>, Tensor>;
template <class T>
constexpr bool kIsTensorList = std::is_same_v<std::remove_cvref_t<T>, std::vector<Tensor>>;

template <class Op>
class FunctionNode final : public Node {
 public:
  using State = typename StateOf<Op>::type;
  FunctionNode(std::string_view name, Here where, Context<State>&& ctx)
      : Node(name, where), ctx_(std::move(ctx)) {}
  std::vector<Tensor> apply(const std::vector<Tensor>& grad_outputs,
                            detail::GradDestinations* destinations) override {
    struct Offer {  // the destinations are visible to this one backward call only
      Context<State>& ctx;
      ~Offer() { ctx.destinations_ = nullptr; }
    } offer{ctx_};
    ctx_.destinations_ = destinations;
    return Op::backward(ctx_, grad_outputs);
  }
  size_t saved_bytes() const override { return ctx_.saved_bytes(); }

 protected:
  void release_saved() override { ctx_.release(); }

 private:
  Context<State> ctx_;
};

/// Wires a new node between `inputs` and `outputs` (called by Function::apply).
void record(const std::shared_ptr<Node>& node, std::span<const Tensor* const> inputs,
            std::span<Tensor> outputs);

/// One argument of an op under autocast: a Tensor (or each Tensor of a list) cast by the
/// op's rule; any other argument passed through untouched.
inline Tensor autocast_arg(const Tensor& t, DType target, Here where) {
  return autocast_input(t, target, where);
}
inline std::vector<Tensor> autocast_arg(const std::vector<Tensor>& ts, DType target, Here where) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(autocast_input(t, target, where));
  return out;
}
template <class T>
requires(!kIsTensor<T> && !kIsTensorList<T>) T && autocast_arg(T&& arg, DType, Here) {
  return std::forward<T>(arg);
}
}  // namespace detail

/// Base of every differentiable op, built-in or yours (CRTP, like torch.autograd.Function):
///
///   struct Square : tg::Function<Square> {
///     static constexpr std::string_view kName = "square";
///     static Tensor forward(Context<>& ctx, const Tensor& x) {
///       ctx.save_for_backward(x);
///       return ...;                                   // x * x, computed without the tape
///     }
///     static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
///       Tensor x = ctx.saved_tensors()[0];
///       return {...};                                 // 2 * x * g[0], one slot per input
///     }
///   };
///   Tensor y = Square::apply(x);
///
/// forward may take any arguments; the Tensor ones are the op's inputs, and backward
/// returns one gradient slot per Tensor argument, in order (undefined where none is
/// needed); a std::vector<Tensor> argument (cat, stack) counts as one input per element.
/// forward returns a Tensor or a std::vector<Tensor>. An op that needs state declares
/// `struct State {...};` and gets `Context<State>`.
template <class Op>
struct Function {
  // (No `using State = ...` here: Op is still incomplete while its base is instantiated,
  // so its State is looked up inside apply_at, which is instantiated after.)
  template <class... Args>
  static auto apply(Args&&... args) {
    return apply_at(Here{}, std::forward<Args>(args)...);
  }

  /// apply, recording `where` as the caller's location (for anomaly mode and print_tape).
  /// Under an AutocastGuard, an op that declares `static constexpr AutocastRule kAutocast`
  /// first casts its floating inputs by that rule (core/autocast.h); the casts are ops on
  /// the tape of their own, recorded before this one.
  template <class... Args>
  static auto apply_at(Here where, Args&&... args) {
    if constexpr (requires { Op::kAutocast; }) {
      if (autocast_enabled()) {
        SmallVector<DType, 4> dtypes;  // the floating inputs' dtypes, for kPromote
        auto note = [&](const Tensor& t) {
          if (t.defined() && is_floating_point(t.dtype()) && t.dtype() != kFloat64) {
            dtypes.push_back(t.dtype());
          }
        };
        (
            [&] {
              if constexpr (detail::kIsTensor<Args>) note(args);
              else if constexpr (detail::kIsTensorList<Args>) {
                for (const Tensor& t : args) note(t);
              }
            }(),
            ...);
        const DType target = detail::autocast_target(Op::kAutocast, dtypes);
        // A braced list casts the arguments left to right (function arguments would be cast
        // in an order each compiler picks, and the casts' order on the tape with them).
        std::tuple<decltype(detail::autocast_arg(std::forward<Args>(args), target, where))...> cast{
            detail::autocast_arg(std::forward<Args>(args), target, where)...};
        return std::apply(
            [&](auto&&... a) { return record_at(where, std::forward<decltype(a)>(a)...); },
            std::move(cast));
      }
    }
    return record_at(where, std::forward<Args>(args)...);
  }

  static constexpr std::string_view name() {
    if constexpr (requires { Op::kName; }) return Op::kName;
    else return "custom";
  }

 private:
  /// The call itself: runs forward without recording inside it, and records one node when
  /// grad mode is on and an input requires grad.
  template <class... Args>
  static auto record_at(Here where, Args&&... args) {
    // Pointers to the tensor arguments, which live until this call returns: no copies (a
    // copy of a Tensor is an atomic reference-count increment and, later, a decrement).
    SmallVector<const Tensor*, 4> inputs;
    (
        [&] {
          if constexpr (detail::kIsTensor<Args>) inputs.push_back(&args);
          else if constexpr (detail::kIsTensorList<Args>) {
            for (const Tensor& t : args) inputs.push_back(&t);
          }
        }(),
        ...);
    using State = typename detail::StateOf<Op>::type;
    Context<State> ctx;
    bool record = false;
    if (grad_mode_enabled()) {
      for (const Tensor* t : inputs) record = record || (t->defined() && t->requires_grad());
    }
    ctx.op_name_ = name();
    if (record) {
      ctx.recording_ = true;
      for (const Tensor* t : inputs) ctx.needs_grad_.push_back(t->defined() && t->requires_grad());
    }
    // The forward computes values only: nothing inside it is recorded.
    auto out = [&] {
      NoGradGuard no_grad;
      detail::ProfileScope profile(name(), "forward");
      return Op::forward(ctx, args...);
    }();
    if (!record) return out;

    // The node lives until backward; make_recycled reuses the block of a freed node.
    auto node = detail::make_recycled<detail::FunctionNode<Op>>(name(), where, std::move(ctx));
    if constexpr (std::is_same_v<decltype(out), Tensor>) {
      detail::record(node, inputs, std::span<Tensor>(&out, 1));
    } else {
      detail::record(node, inputs, out);
    }
    return out;
  }
};

// ---------------------------------------------------------------- running backward
/// Backpropagates from `root` into the .grad of every leaf that requires grad.
/// `root` must be a scalar unless `grad` (d(loss)/d(root)) is given. Without
/// retain_graph the saved tensors are freed, and a second backward is an error.
void backward(const Tensor& root, const Tensor& grad = {}, bool retain_graph = false);

/// d(sum of outputs . grad_outputs)/d(inputs), returned instead of written to .grad
/// (nothing's .grad changes). An input the outputs do not depend on is an error unless
/// allow_unused, in which case its slot is undefined.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool allow_unused = false);

/// Runs `callback` once the backward pass now running has finished: after every leaf got its
/// .grad and every post-accumulate hook ran (Tensor::register_post_accumulate_grad_hook).
/// Callbacks run in the order they were queued. Call it from a hook, during a backward;
/// elsewhere it is a MisuseError. This is how DistributedDataParallel (nn/distributed/ddp.h)
/// waits for its last all-reduce before backward returns. PyTorch equivalent:
/// torch.autograd.Variable._execution_engine.queue_callback(callback).
void queue_backward_callback(std::function<void()> callback);

}  // namespace tg
