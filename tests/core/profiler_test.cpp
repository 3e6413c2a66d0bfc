// tests/core/profiler_test.cpp — tg::Profiler counts every op's forward and backward once,
// gives nested calls to the outermost one, sees the optimizers, and records nothing when off.
#include "core/profiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/core.h"
#include "nn/nn.h"
#include "ops/ops.h"
#include "test_util.h"

namespace tg {
namespace {

const OpTime* find(const std::vector<OpTime>& rows, std::string_view op, std::string_view phase) {
  for (const OpTime& r : rows) {
    if (r.op == op && r.phase == phase) return &r;
  }
  return nullptr;
}

int64_t calls(const std::vector<OpTime>& rows, std::string_view op, std::string_view phase) {
  const OpTime* r = find(rows, op, phase);
  return r == nullptr ? 0 : r->calls;
}

TEST(Profiler, CountsEachForwardAndBackward) {
  Tensor x = tensor({1.0f, -2.0f, 3.0f}).requires_grad_();
  Profiler profiler;
  for (int i = 0; i < 3; ++i) sum(relu(x * 2.0)).backward();
  profiler.stop();
  const std::vector<OpTime> rows = profiler.results();
  EXPECT_EQ(calls(rows, "mul_scalar", "forward"), 3);
  EXPECT_EQ(calls(rows, "relu", "forward"), 3);
  EXPECT_EQ(calls(rows, "sum", "forward"), 3);
  EXPECT_EQ(calls(rows, "sum", "backward"), 3);
  EXPECT_EQ(calls(rows, "relu", "backward"), 3);
  EXPECT_EQ(calls(rows, "mul_scalar", "backward"), 3);
  for (const OpTime& r : rows) EXPECT_GE(r.seconds, 0.0) << r.op << " " << r.phase;
}

// An op that takes a known time, and calls another op inside (a composite).
struct Slow : Function<Slow> {
  static constexpr std::string_view kName = "slow";
  static Tensor forward(Context<>&, const Tensor& x) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return relu(x);
  }
  static std::vector<Tensor> backward(Context<>&, const std::vector<Tensor>& g) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return {g[0] * 1.0};
  }
};

TEST(Profiler, NestedCallsBelongToTheOutermostAndTheRowsDoNotOverlap) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  Profiler profiler;
  const auto t0 = std::chrono::steady_clock::now();
  sum(Slow::apply(x)).backward();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  profiler.stop();
  const std::vector<OpTime> rows = profiler.results();
  // relu inside slow's forward and mul_scalar inside its backward are slow's time.
  EXPECT_EQ(calls(rows, "relu", "forward"), 0);
  EXPECT_EQ(calls(rows, "mul_scalar", "forward"), 0);
  ASSERT_NE(find(rows, "slow", "forward"), nullptr);
  ASSERT_NE(find(rows, "slow", "backward"), nullptr);
  EXPECT_GE(find(rows, "slow", "forward")->seconds, 0.020);
  EXPECT_GE(find(rows, "slow", "backward")->seconds, 0.010);
  // The most time first.
  EXPECT_EQ(rows.front().op, "slow");
  EXPECT_EQ(rows.front().phase, "forward");
  double total = 0;
  for (const OpTime& r : rows) total += r.seconds;
  EXPECT_LE(total, wall);
}

TEST(Profiler, SeesTheOptimizer) {
  Tensor w = tensor({1.0f, 2.0f}).requires_grad_();
  nn::AdamW adamw({w}, {.lr = 0.1});
  Profiler profiler;
  for (int i = 0; i < 2; ++i) {
    adamw.zero_grad();
    sum(w * w).backward();
    adamw.step();
  }
  const std::vector<OpTime> rows = profiler.results();
  EXPECT_EQ(calls(rows, "adamw", "step"), 2);
  EXPECT_EQ(calls(rows, "optimizer", "zero_grad"), 2);
  // The ops the step runs inside are its own time.
  EXPECT_EQ(calls(rows, "mul", "forward"), 2);
}

TEST(Profiler, RecordsNothingWhenStoppedAndForgetsOnReset) {
  Tensor x = tensor({1.0f}).requires_grad_();
  Profiler profiler;
  (void)relu(x);
  profiler.stop();
  (void)relu(x);
  (void)relu(x);
  EXPECT_EQ(calls(profiler.results(), "relu", "forward"), 1);
  profiler.reset();
  EXPECT_TRUE(profiler.results().empty());
}

TEST(Profiler, DoesNotChangeAnyResult) {
  Generator gen(3);
  const Tensor x = randn({4, 8}, kFloat32, gen);
  const Tensor w = randn({5, 8}, kFloat32, gen);
  auto grads = [&] {
    Tensor wl = w.clone().requires_grad_();
    sum(relu(linear(x, wl))).backward();
    return wl.grad();
  };
  const Tensor plain = grads();
  Tensor profiled;
  {
    Profiler profiler;
    profiled = grads();
  }
  EXPECT_EQ(plain.to_vector<float>(), profiled.to_vector<float>());
}

TEST(Profiler, OneAtATime) {
  Profiler first;
  EXPECT_TG_THROW(Profiler{}, MisuseError, "Profiler", "already running");
  first.stop();
  Profiler third;  // once the first has stopped, a new one may start
  (void)relu(tensor({1.0f}));
  EXPECT_EQ(calls(third.results(), "relu", "forward"), 1);
}

}  // namespace
}  // namespace tg
