// tests/core/autograd_test.cpp — the tape, backward, grad, hooks, modes and misuse errors.
#include <cmath>

#include "test_util.h"

namespace {

using tg::Context;
using tg::Function;
using tg::Tensor;

Tensor vec(std::vector<double> v) { return tg::tensor(v); }
std::vector<double> values(const Tensor& t) { return t.to(tg::kFloat64).to_vector<double>(); }

TEST(AutogradTest, LeafGradientsAccumulateAcrossBackwardCalls) {
  Tensor a = vec({1, 2, 3}).requires_grad_();
  Tensor b = vec({4, 5, 6}).requires_grad_();
  tg::backward(a * b, tg::ones({3}, tg::kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{4, 5, 6}));  // d(ab)/da = b
  EXPECT_EQ(values(b.grad()), (std::vector<double>{1, 2, 3}));
  (a * b).backward(tg::ones({3}, tg::kFloat64));  // a new graph: += into .grad
  EXPECT_EQ(values(a.grad()), (std::vector<double>{8, 10, 12}));
  a.set_grad(Tensor());  // zero_grad
  EXPECT_FALSE(a.grad().defined());
}

TEST(AutogradTest, FanOutSumsTheGradientsOfEveryUse) {
  // y = a*a + a uses a three times: dy/da = 2a + 1.
  Tensor a = vec({1, -2}).requires_grad_();
  (a * a + a).backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{3, -3}));
}

TEST(AutogradTest, BroadcastGradientsAreSummedToTheInputShape) {
  Tensor col = tg::tensor({1.0, 2.0}, {2, 1}).requires_grad_();
  Tensor row = tg::tensor({10.0, 20.0, 30.0}, {3}).requires_grad_();
  (col * row).backward(tg::ones({2, 3}, tg::kFloat64));
  EXPECT_EQ(col.grad().shape(), (tg::Shape{2, 1}));
  EXPECT_EQ(values(col.grad()), (std::vector<double>{60, 60}));
  EXPECT_EQ(values(row.grad()), (std::vector<double>{3, 3, 3}));
}

TEST(AutogradTest, ScalarRootNeedsNoUpstreamGradient) {
  Tensor a = tg::scalar_tensor(3.0, tg::kFloat64).requires_grad_();
  (a * a).backward();
  EXPECT_EQ(a.grad().item<double>(), 6.0);
}

TEST(AutogradTest, SecondBackwardThroughAFreedGraphIsMisuse) {
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor y = a * a;
  y.backward(tg::ones({2}, tg::kFloat64));
  EXPECT_TG_THROW(y.backward(tg::ones({2}, tg::kFloat64)), MisuseError, "second time", "'mul'",
                  "retain_graph=true");
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2, 4}));  // not double-counted
}

TEST(AutogradTest, RetainGraphAllowsASecondBackward) {
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor y = a * a;
  y.backward(tg::ones({2}, tg::kFloat64), /*retain_graph=*/true);
  y.backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{4, 8}));
}

TEST(AutogradTest, BackwardErrorsNameTheProblem) {
  Tensor a = vec({1, 2}).requires_grad_();
  EXPECT_TG_THROW((a * a).backward(), MisuseError, "backward", "scalar", "(2)");
  EXPECT_TG_THROW((a * a).backward(tg::ones({3}, tg::kFloat64)), ShapeError, "backward", "(3)",
                  "(2)");
  EXPECT_TG_THROW(vec({1}).backward(), MisuseError, "backward", "does not require grad",
                  "requires_grad_()");
  EXPECT_TG_THROW(tg::backward(Tensor()), MisuseError, "undefined");
}

TEST(AutogradTest, NoGradGuardRecordsAndSavesNothing) {
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor y;
  {
    tg::NoGradGuard no_grad;
    EXPECT_FALSE(tg::grad_mode_enabled());
    y = a * a;
  }
  EXPECT_TRUE(tg::grad_mode_enabled());
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
  EXPECT_EQ(values(y), (std::vector<double>{1, 4}));
}

TEST(AutogradTest, DetachSharesDataButCutsHistory) {
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor y = a * a;
  Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  EXPECT_EQ(d.storage(), y.storage());
  (d * a).backward(tg::ones({2}, tg::kFloat64));  // only the a factor reaches a
  EXPECT_EQ(values(a.grad()), (std::vector<double>{1, 4}));
}

TEST(AutogradTest, OnlyLeavesCanChangeRequiresGrad) {
  Tensor a = vec({1}).requires_grad_();
  Tensor y = a * a;
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TG_THROW(y.requires_grad_(false), MisuseError, "requires_grad_", "mul", "leaf");
  EXPECT_TG_THROW(tg::tensor({1, 2}, {2}).requires_grad_(), DTypeError, "int64");
}

TEST(AutogradTest, NonLeafGradNeedsRetainGrad) {
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor h = a * a;
  Tensor y = h * a;
  Tensor kept = a + a;
  kept.retain_grad();
  (y + kept).backward(tg::ones({2}, tg::kFloat64));
  EXPECT_TG_THROW(h.grad(), MisuseError, "not a leaf", "'mul'", "retain_grad()");
  EXPECT_EQ(values(kept.grad()), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{3 + 2, 12 + 2}));  // 3a^2 + 2
}

TEST(AutogradTest, FunctionalGradLeavesDotGradAlone) {
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor b = vec({3, 4}).requires_grad_();
  Tensor h = a * b;
  const auto g = tg::grad({h * a}, {a, h}, {tg::ones({2}, tg::kFloat64)});
  EXPECT_EQ(values(g[0]), (std::vector<double>{6, 16}));  // d(a^2 b)/da = 2ab
  EXPECT_EQ(values(g[1]), (std::vector<double>{1, 2}));   // d(h a)/dh = a
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

TEST(AutogradTest, FunctionalGradErrors) {
  Tensor a = vec({1}).requires_grad_();
  Tensor unused = vec({1}).requires_grad_();
  Tensor y = a * a;
  EXPECT_TG_THROW(tg::grad({y}, {vec({1})}), MisuseError, "grad", "input 0",
                  "does not require grad");
  EXPECT_TG_THROW(tg::grad({y}, {a, unused}, {}, true), MisuseError, "input 1", "not used",
                  "allow_unused");
  const auto g = tg::grad({y}, {a, unused}, {}, false, /*allow_unused=*/true);
  EXPECT_EQ(g[0].item<double>(), 2.0);
  EXPECT_FALSE(g[1].defined());
}

TEST(AutogradTest, AHundredThousandOpChainNeedsNoRecursion) {
  // Backward, and the destruction of the graph, must both be loops: a recursive engine
  // would overflow the stack long before 100,000 nodes.
  Tensor x = vec({1.5}).requires_grad_();
  const Tensor one = vec({1.0});
  {
    Tensor z = x;
    for (int i = 0; i < 100000; ++i) z = z * one;
    z.backward(tg::ones({1}, tg::kFloat64));
  }
  EXPECT_EQ(x.grad().item<double>(), 1.0);
  Tensor z = x;
  for (int i = 0; i < 100000; ++i) z = z * one;  // dropped without a backward
}

TEST(AutogradTest, ModifyingASavedTensorInPlaceIsDetected) {
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor b = vec({3, 4}).requires_grad_();
  Tensor y = a * b;  // mul saves a and b
  {
    tg::NoGradGuard no_grad;
    b.fill_(0.0);  // bumps b's storage version
  }
  EXPECT_TG_THROW(y.backward(tg::ones({2}, tg::kFloat64)), MisuseError, "'mul'", "saved tensor 1",
                  "modified in place", "version 0 -> 1");
}

TEST(AutogradTest, InPlaceWritesToTheTapeAreRefused) {
  Tensor a = vec({1, 2}).requires_grad_();
  EXPECT_TG_THROW(a.fill_(0.0), MisuseError, "fill_", "leaf", "NoGradGuard");
  Tensor y = a * a;
  EXPECT_TG_THROW(y.copy_(vec({5, 6})), MisuseError, "copy_", "recorded op");
  tg::NoGradGuard no_grad;
  a.fill_(7.0);  // the optimizer's way
  EXPECT_EQ(values(a), (std::vector<double>{7, 7}));
}

// A deliberately broken op: its backward divides by its input, so x = 0 gives Inf.
struct Reciprocal : Function<Reciprocal> {
  static constexpr std::string_view kName = "reciprocal";
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    Tensor out = tg::empty_like(x);
    for (int64_t i = 0; i < x.numel(); ++i) {
      out.data<double>()[i] = 1.0 / x.contiguous().data<double>()[i];
    }
    return out;
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0].contiguous();
    Tensor dx = tg::empty_like(x);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = x.data<double>()[i];
      dx.data<double>()[i] = -g[0].contiguous().data<double>()[i] / (v * v);
    }
    return {dx};
  }
};

TEST(AutogradTest, AnomalyModeNamesTheOpAndTheCallingLine) {
  Tensor x = vec({0.0, 1.0}).requires_grad_();
  {
    Tensor y = Reciprocal::apply(x);
    EXPECT_NO_THROW(y.backward(tg::ones({2}, tg::kFloat64)));  // off: Inf flows silently
    EXPECT_TRUE(std::isinf(values(x.grad())[0]));
  }
  tg::DetectAnomalyGuard anomaly;
  const int line = __LINE__ + 1;
  Tensor y = Reciprocal::apply_at(tg::Here::current(), x);
  EXPECT_TG_THROW(y.backward(tg::ones({2}, tg::kFloat64)), ValueError, "anomaly", "'reciprocal'",
                  "input 0", fmt::format("autograd_test.cpp:{}", line));
}

TEST(AutogradTest, AnomalyModeThroughAnOperatorPointsAtTheExpression) {
  Tensor x = vec({0.0}).requires_grad_();
  Tensor inf = vec({INFINITY});
  tg::DetectAnomalyGuard anomaly;
  const int line = __LINE__ + 1;
  Tensor y = x * inf;  // d/dx = inf
  EXPECT_TG_THROW(y.backward(tg::ones({1}, tg::kFloat64)), ValueError, "'mul'",
                  fmt::format("autograd_test.cpp:{}", line));
}

TEST(AutogradTest, HooksSeeAndMayReplaceGradients) {
  Tensor a = vec({1, 2}).requires_grad_();
  std::vector<double> seen_mid, seen_leaf;
  a.register_hook([&](const Tensor& g) {
    seen_leaf = values(g);
    return tg::mul(g, vec({10, 10}));  // replaces the leaf's gradient
  });
  Tensor h = a * a;
  h.register_hook([&](const Tensor& g) {
    seen_mid = values(g);
    return Tensor();  // keep
  });
  (h * vec({3, 3})).backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(seen_mid, (std::vector<double>{3, 3}));
  EXPECT_EQ(seen_leaf, (std::vector<double>{6, 12}));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{60, 120}));
  EXPECT_TG_THROW(vec({1}).register_hook([](const Tensor&) { return Tensor(); }), MisuseError,
                  "register_hook", "does not require grad");
}

TEST(AutogradTest, PostAccumulateHooksFireDuringBackwardOnceEachLeafIsComplete) {
  // loss = sum(w2 * (w1 * x)): backward reaches w2 first, and w1's gradient is computed
  // after w2's hook ran, so that hook sees w1 without a gradient yet.
  Tensor x = vec({1, 2});
  Tensor w1 = vec({3, 4}).requires_grad_();
  Tensor w2 = vec({5, 6}).requires_grad_();
  std::vector<std::string> order;
  bool w1_done_when_w2_fired = true;
  w2.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    order.push_back("w2");
    EXPECT_EQ(values(leaf.grad()), (std::vector<double>{3, 8}));  // w1 * x
    w1_done_when_w2_fired = w1.grad().defined();
  });
  w1.register_post_accumulate_grad_hook([&](const Tensor& leaf) {
    order.push_back("w1");
    EXPECT_EQ(values(leaf.grad()), (std::vector<double>{5, 12}));  // w2 * x
  });
  tg::sum(w2 * (w1 * x)).backward();
  EXPECT_EQ(order, (std::vector<std::string>{"w2", "w1"}));
  EXPECT_FALSE(w1_done_when_w2_fired);
}

TEST(AutogradTest, APostAccumulateHookSeesTheSumOverEveryUseAndTheAccumulatedGrad) {
  Tensor w = vec({1, 2}).requires_grad_();
  std::vector<std::vector<double>> seen;
  w.register_post_accumulate_grad_hook(
      [&](const Tensor& leaf) { seen.push_back(values(leaf.grad())); });
  // Three uses: d/dw of (w * w + 3 w) = 2 w + 3, delivered once, complete.
  tg::sum(w * w + w * 3.0).backward();
  // A second backward adds into .grad; the hook sees the running sum (gradient accumulation).
  tg::sum(w * 3.0).backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::vector<double>{5, 7}));
  EXPECT_EQ(seen[1], (std::vector<double>{8, 10}));
  // tg::grad fills no .grad, so nothing accumulates and the hook stays quiet.
  tg::grad({tg::sum(w * 2.0)}, {w});
  EXPECT_EQ(seen.size(), 2u);
}

TEST(AutogradTest, PostAccumulateHooksAreForLeavesThatRequireGrad) {
  Tensor w = vec({1, 2}).requires_grad_();
  EXPECT_TG_THROW((w * 2.0).register_post_accumulate_grad_hook([](const Tensor&) {}), MisuseError,
                  "register_post_accumulate_grad_hook", "only a leaf", "was made by 'mul");
  EXPECT_TG_THROW(vec({1}).register_post_accumulate_grad_hook([](const Tensor&) {}), MisuseError,
                  "does not require grad");
}

TEST(AutogradTest, QueuedCallbacksRunAfterEveryLeafHasItsGrad) {
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor b = vec({3, 4}).requires_grad_();
  std::vector<std::string> events;
  b.register_post_accumulate_grad_hook([&](const Tensor&) {
    events.push_back("b");
    tg::queue_backward_callback([&] {
      events.push_back(a.grad().defined() && b.grad().defined() ? "callback, both done"
                                                                : "callback too early");
      tg::queue_backward_callback([&] { events.push_back("queued by a callback"); });
    });
  });
  tg::sum(a * (b * 2.0)).backward();
  EXPECT_EQ(events, (std::vector<std::string>{"b", "callback, both done", "queued by a callback"}));
  EXPECT_TG_THROW(tg::queue_backward_callback([] {}), MisuseError, "queue_backward_callback",
                  "no backward is running");
  // A callback queued in one backward does not leak into the next.
  events.clear();
  tg::sum(a * 2.0).backward();
  EXPECT_TRUE(events.empty());
}

TEST(AutogradTest, AHookThatChangesTheShapeOrDtypeIsNamedNotObeyed) {
  // A leaf's hook: its result would be added into an existing .grad element by element.
  Tensor a = vec({1, 2, 3}).requires_grad_();
  (a * 2.0).backward(tg::ones({3}, tg::kFloat64));  // a.grad exists now
  a.register_hook([](const Tensor&) { return tg::ones({1}, tg::kFloat64); });
  EXPECT_TG_THROW((a * 2.0).backward(tg::ones({3}, tg::kFloat64)), ShapeError,
                  "hook 0 on a leaf tensor of shape (3)", "shape (1)", "has shape (3)");
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2, 2, 2}));  // untouched
  // A hook on an op's output: its result would reach the op's kernels, which trust its size.
  Tensor b = vec({1, 2}).requires_grad_();
  Tensor e = tg::exp(b);
  e.register_hook([](const Tensor& g) { return g.to(tg::kFloat32); });
  EXPECT_TG_THROW(tg::sum(e).backward(), DTypeError, "hook 0 on output 0 of 'exp'",
                  "autograd_test.cpp", "dtype float32", "is float64");
  // Through tg::grad, too (a wrong shape would come back as the result).
  Tensor c = vec({1, 2}).requires_grad_();
  Tensor d = c * 3.0;
  d.register_hook([](const Tensor&) { return tg::ones({2, 1}, tg::kFloat64); });
  EXPECT_TG_THROW(tg::grad({tg::sum(d)}, {c}), ShapeError, "hook 0 on output 0 of 'mul_scalar'",
                  "shape (2, 1)");
  // Same shape and dtype, another layout: fine.
  Tensor f = vec({1, 2}).requires_grad_();
  Tensor h = f * 1.0;
  h.register_hook([](const Tensor& g) { return tg::stack({g, g}, 1).select(1, 0) * 5.0; });
  tg::sum(h).backward();
  EXPECT_EQ(values(f.grad()), (std::vector<double>{5, 5}));
}

// Custom Functions exercising the API's contract.
struct ScaleBy : Function<ScaleBy> {
  static constexpr std::string_view kName = "scale_by";
  struct State {
    double factor = 0;
    bool needed_x = false, needed_y = false;
  };
  static Tensor forward(Context<State>& ctx, const Tensor& x, double factor, const Tensor& y) {
    ctx.state.factor = factor;
    ctx.state.needed_x = ctx.needs_input_grad(0);
    ctx.state.needed_y = ctx.needs_input_grad(1);
    return tg::mul(x, tg::full(x.shape(), factor, x.dtype())) + y;
  }
  static std::vector<Tensor> backward(Context<State>& ctx, const std::vector<Tensor>& g) {
    EXPECT_TRUE(ctx.state.needed_x);
    EXPECT_FALSE(ctx.state.needed_y);
    return {tg::mul(g[0], tg::full(g[0].shape(), ctx.state.factor, g[0].dtype())), Tensor()};
  }
};

TEST(AutogradTest, CustomFunctionWithStateAndMixedArguments) {
  Tensor x = vec({1, 2}).requires_grad_();
  Tensor y = ScaleBy::apply(x, 2.5, vec({1, 1}));
  EXPECT_EQ(values(y), (std::vector<double>{3.5, 6}));
  EXPECT_EQ(y.grad_fn()->name(), "scale_by");
  y.backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2.5, 2.5}));
}

// An identity op whose backward asks Context::grad_buffer where its gradient goes, counting
// the times it is handed the existing .grad to add into.
struct AddsIntoGrad : Function<AddsIntoGrad> {
  static constexpr std::string_view kName = "adds_into_grad";
  static inline int offers = 0;
  static Tensor forward(Context<>& ctx, const Tensor& x) {
    ctx.save_for_backward(x);
    return x.clone();
  }
  static std::vector<Tensor> backward(Context<>& ctx, const std::vector<Tensor>& g) {
    const Tensor x = ctx.saved_tensors()[0];
    tg::GradBuffer dx = ctx.grad_buffer(0, x.shape(), x.dtype());
    if (dx.add) {
      ++offers;
      dx.tensor.copy_(dx.tensor + g[0]);  // (backward runs without recording)
    } else {
      dx.tensor.copy_(g[0]);
    }
    return {dx.tensor};  // the .grad itself: "delivered"
  }
};

TEST(AutogradTest, GradBufferOffersTheGradOnlyWhenItGivesTheSameSum) {
  Tensor x = vec({1, 2}).requires_grad_();
  const Tensor two = tg::full({2}, 2.0, tg::kFloat64);
  AddsIntoGrad::offers = 0;
  AddsIntoGrad::apply(x).backward(two);  // no .grad yet: nothing to add into
  EXPECT_EQ(AddsIntoGrad::offers, 0);
  AddsIntoGrad::apply(x).backward(two);  // offered, and the op's sum is the result
  EXPECT_EQ(AddsIntoGrad::offers, 1);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, 4}));
  // Two edges into x: the gradients must be summed first, so no offer.
  (AddsIntoGrad::apply(x) + AddsIntoGrad::apply(x)).backward(two);
  EXPECT_EQ(AddsIntoGrad::offers, 1);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{8, 8}));
  // tg::grad leaves .grad alone; anomaly mode and a hook must see the gradient on its own.
  EXPECT_EQ(values(tg::grad({AddsIntoGrad::apply(x)}, {x}, {two})[0]), (std::vector<double>{2, 2}));
  {
    tg::DetectAnomalyGuard anomaly;
    AddsIntoGrad::apply(x).backward(two);
  }
  EXPECT_EQ(AddsIntoGrad::offers, 1);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{10, 10}));
  x.register_hook([](const Tensor&) { return Tensor(); });
  AddsIntoGrad::apply(x).backward(two);
  EXPECT_EQ(AddsIntoGrad::offers, 1);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{12, 12}));
}

TEST(AutogradTest, GradBufferIsNeverAGradTheBackwardReads) {
  // The upstream gradient passed to backward is x.grad itself: adding into it while reading
  // it would double it, so the buffer is a fresh one.
  Tensor x = vec({1, 2}).requires_grad_();
  AddsIntoGrad::apply(x).backward(tg::full({2}, 3.0, tg::kFloat64));
  AddsIntoGrad::offers = 0;
  AddsIntoGrad::apply(x).backward(x.grad());
  EXPECT_EQ(AddsIntoGrad::offers, 0);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{6, 6}));
}

struct WrongCount : Function<WrongCount> {
  static Tensor forward(Context<>&, const Tensor& x) { return x.clone(); }
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) {
    return {g[0], g[0]};
  }
};
struct WrongShape : Function<WrongShape> {
  static constexpr std::string_view kName = "wrong_shape";
  static Tensor forward(Context<>&, const Tensor& x) { return x.clone(); }
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>&) {
    return {tg::ones({5}, tg::kFloat64)};
  }
};

TEST(AutogradTest, BackwardContractViolationsAreReported) {
  Tensor x = vec({1, 2}).requires_grad_();
  EXPECT_TG_THROW(WrongCount::apply(x).backward(tg::ones({2}, tg::kFloat64)), Error, "'custom'",
                  "returned 2 gradients", "1 tensor inputs");
  EXPECT_TG_THROW(WrongShape::apply(x).backward(tg::ones({2}, tg::kFloat64)), ShapeError,
                  "'wrong_shape'", "(5)", "input 0", "(2)");
}

struct Identity : Function<Identity> {
  static Tensor forward(Context<>&, const Tensor& x) { return x; }  // returns its input
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) { return {g[0]}; }
};

TEST(AutogradTest, AnOutputThatIsAnInputGetsItsOwnHistory) {
  Tensor x = vec({1, 2}).requires_grad_();
  Tensor y = Identity::apply(x);
  EXPECT_TRUE(x.is_leaf());  // the leaf was not turned into a non-leaf
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(y.storage(), x.storage());
  y.backward(tg::ones({2}, tg::kFloat64));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 1}));
}

struct SplitHalves : Function<SplitHalves> {
  static constexpr std::string_view kName = "split_halves";
  static std::vector<Tensor> forward(Context<>&, const Tensor& x) {
    return {x.narrow(0, 0, 1).clone(), x.narrow(0, 1, 1).clone()};
  }
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) {
    Tensor dx = tg::zeros({2}, tg::kFloat64);
    dx.narrow(0, 0, 1).copy_(g[0]);
    dx.narrow(0, 1, 1).copy_(g[1]);
    return {dx};
  }
};

TEST(AutogradTest, UnusedOutputsReceiveZeroGradients) {
  Tensor x = vec({1, 2}).requires_grad_();
  auto parts = SplitHalves::apply(x);
  EXPECT_EQ(parts[1].impl()->output_nr, 1u);
  (parts[1] * vec({5})).backward(tg::ones({1}, tg::kFloat64));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 5}));
}

TEST(AutogradTest, TheTapeRecordsInForwardOrder) {
  Tensor a = vec({1}).requires_grad_();
  Tensor b = a * a;
  Tensor c = b + a;
  Tensor d = c * b;
  EXPECT_LT(b.grad_fn()->sequence_nr(), c.grad_fn()->sequence_nr());
  EXPECT_LT(c.grad_fn()->sequence_nr(), d.grad_fn()->sequence_nr());
  EXPECT_EQ(d.grad_fn()->next_edges[0].fn, c.grad_fn());
  EXPECT_EQ(c.grad_fn()->next_edges[1].leaf.get(), a.impl());
}

TEST(AutogradTest, GradientsKeepTheLeafDtype) {
  Tensor a = tg::tensor({1.f, 2.f}, {2}).requires_grad_();
  (a * a).backward(tg::ones({2}));
  EXPECT_EQ(a.grad().dtype(), tg::kFloat32);
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{2, 4}));
}

}  // namespace

namespace {

TEST(AutogradTest, SummingGradientsNeverWritesIntoSharedTensors) {
  // add's backward hands the same tensor to both inputs; each then meets a second
  // gradient. Summing in place into a shared tensor would corrupt the other sum.
  Tensor a = vec({1, 2}).requires_grad_();
  Tensor b = vec({3, 4}).requires_grad_();
  Tensor p = a * vec({1, 1}), q = b * vec({1, 1});
  Tensor s = p + q;                              // dp = dq = ds (the same tensor)
  Tensor y = s * vec({2, 2}) + p * vec({5, 5});  // p gets a second gradient
  const Tensor upstream = tg::ones({2}, tg::kFloat64);
  y.backward(upstream);
  EXPECT_EQ(values(a.grad()), (std::vector<double>{7, 7}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{2, 2}));
  EXPECT_EQ(values(upstream), (std::vector<double>{1, 1}));  // the caller's tensor is intact
}

// An identity op whose backward returns a fresh gradient and remembers where its memory is,
// and optionally also keeps a handle to it (as a cache or a hook might).
struct FreshGradient : Function<FreshGradient> {
  static constexpr std::string_view kName = "fresh_gradient";
  static inline const void* memory = nullptr;
  static inline bool keep = false;
  static inline Tensor kept;
  static Tensor forward(Context<>&, const Tensor& x) { return x.clone(); }
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) {
    Tensor dx = g[0].clone();
    memory = dx.raw_data();
    if (keep) kept = dx;
    return {dx};
  }
};

TEST(AutogradTest, AGradientNobodyElseHoldsBecomesTheGradWithoutACopy) {
  Tensor x = vec({1, 2}).requires_grad_();
  FreshGradient::keep = false;
  FreshGradient::apply(x).backward(tg::full({2}, 3.0, tg::kFloat64));
  EXPECT_EQ(x.grad().raw_data(), FreshGradient::memory);  // taken over, not copied
  EXPECT_EQ(values(x.grad()), (std::vector<double>{3, 3}));
}

TEST(AutogradTest, AGradientSomeoneElseHoldsIsCopiedIntoTheGrad) {
  // The op keeps a handle: .grad must be a copy, so that accumulating into it later cannot
  // change the op's tensor.
  Tensor x = vec({1, 2}).requires_grad_();
  FreshGradient::keep = true;
  FreshGradient::apply(x).backward(tg::full({2}, 3.0, tg::kFloat64));
  FreshGradient::keep = false;
  EXPECT_NE(x.grad().raw_data(), FreshGradient::memory);
  FreshGradient::apply(x).backward(tg::full({2}, 1.0, tg::kFloat64));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, 4}));
  EXPECT_EQ(values(FreshGradient::kept), (std::vector<double>{3, 3}));
  FreshGradient::kept = Tensor();

  // The caller's gradient for a leaf root is the caller's: .grad is a copy of it.
  Tensor leaf = vec({1, 2}).requires_grad_();
  const Tensor upstream = tg::full({2}, 5.0, tg::kFloat64);
  leaf.backward(upstream);
  EXPECT_NE(leaf.grad().raw_data(), upstream.raw_data());
  leaf.backward(upstream);
  EXPECT_EQ(values(leaf.grad()), (std::vector<double>{10, 10}));
  EXPECT_EQ(values(upstream), (std::vector<double>{5, 5}));
}

}  // namespace
