// nn/recompute.cpp — activation checkpointing as one Function (nn/recompute.h).
#include "nn/recompute.h"

#include "core/autocast.h"
#include "core/autograd.h"
#include "core/generator.h"
#include "ops/attention.h"

namespace tg::nn {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

/// Grad mode on for its lifetime (a backward runs with it off), then as it was.
class GradModeOn {
 public:
  GradModeOn() : previous_(grad_mode_enabled()) { set_grad_mode(true); }
  ~GradModeOn() { set_grad_mode(previous_); }
  GradModeOn(const GradModeOn&) = delete;
  GradModeOn& operator=(const GradModeOn&) = delete;

 private:
  bool previous_;
};

struct Recompute : Function<Recompute> {
  static constexpr std::string_view kName = "recompute";
  struct State {
    Fn fn;
    size_t n_inputs = 0;
    std::vector<Tensor> params;            // leaves, alive anyway: held, not saved
    std::vector<uint64_t> param_versions;  // checked as a saved tensor's version is
    // What the first run saw, for the second.
    bool autocast = false;
    DType autocast_dtype = kBFloat16;
    AttentionAlgorithm attention;
    uint64_t seed = 0, offset = 0;
  };

  // forward: fn(inputs) with the tape off (Function runs every forward so); only the inputs
  // are saved.
  static Tensor forward(Context<State>& ctx, const Fn& fn, const std::vector<Tensor>& inputs,
                        const std::vector<Tensor>& params) {
    const Generator& gen = default_generator();
    ctx.state = {fn,
                 inputs.size(),
                 params,
                 {},
                 autocast_enabled(),
                 autocast_enabled() ? autocast_dtype() : kBFloat16,
                 attention_algorithm(),
                 gen.seed(),
                 gen.offset()};
    for (const Tensor& p : params) ctx.state.param_versions.push_back(p.storage()->version());
    for (const Tensor& x : inputs) ctx.save_for_backward(x);
    return fn(inputs);
  }

  // backward: fn again, on the tape, from detached copies of the inputs (new leaves that
  // share their memory), then d(out . g)/d(inputs, params) by tg::grad.
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    // A parameter changed in place since the forward would make the second run another
    // function: refused, as a saved tensor changed in place is (chapter 2).
    for (size_t i = 0; i < ctx.state.params.size(); ++i) {
      detail::check_version(ctx.state.params[i], ctx.state.param_versions[i], kName,
                            ctx.state.n_inputs + i);
    }
    // exercise recompute.backward: begin
    const State& first = ctx.state;  // what the first run saw
    std::vector<Tensor> inputs;
    for (const Tensor& x : ctx.saved_tensors()) {
      Tensor leaf = x.detach();
      if (is_floating_point(x.dtype())) leaf.requires_grad_(true);
      inputs.push_back(leaf);
    }
    Generator& stream = default_generator();
    const uint64_t seed_now = stream.seed(), offset_now = stream.offset();
    Tensor out;
    {
      GradModeOn grad_on;
      AutocastGuard autocast(first.autocast_dtype, first.autocast);
      AttentionAlgorithmGuard attention(first.attention);
      stream.manual_seed(first.seed);
      stream.set_offset(first.offset);
      out = first.fn(inputs);
    }
    stream.manual_seed(seed_now);
    stream.set_offset(offset_now);
    // Differentiate with respect to every input and parameter that asked for a gradient;
    // the others get an undefined slot.
    std::vector<Tensor> leaves;  // what tg::grad differentiates with respect to
    std::vector<size_t> slot;
    for (size_t i = 0; i < first.n_inputs + first.params.size(); ++i) {
      const Tensor& t = i < first.n_inputs ? inputs[i] : first.params[i - first.n_inputs];
      if (ctx.needs_input_grad(i) && t.requires_grad()) {
        leaves.push_back(t);
        slot.push_back(i);
      }
    }
    std::vector<Tensor> grads(first.n_inputs + first.params.size());
    if (leaves.empty() || !out.requires_grad()) return grads;
    const std::vector<Tensor> got = grad({out}, leaves, {g[0]}, false, /*allow_unused=*/true);
    for (size_t k = 0; k < slot.size(); ++k) grads[slot[k]] = got[k];
    return grads;
    // exercise recompute.backward: end
  }
};

}  // namespace

Tensor recompute(const Fn& fn, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& params) {
  return Recompute::apply(fn, inputs, params);
}

}  // namespace tg::nn
