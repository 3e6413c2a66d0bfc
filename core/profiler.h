// core/profiler.h — where the time of a training step goes, op by op.
//
//   tg::Profiler profiler;                 // records from here ...
//   loss = model(x); loss.backward(); opt.step();
//   for (const tg::OpTime& t : profiler.results()) ...   // ... to here (or until stop())
//
// While a Profiler is running, every op records the wall time of its forward (inside
// Function::apply) and of its backward (inside the engine), and the optimizers their step,
// each under the op's name and phase. The time is wall time on the calling thread, so an
// op whose kernel runs on 16 threads counts once, for as long as it took: at 1 and at 16
// threads the same table shows which ops scale and which do not.
//
// Only the outermost call counts. An op whose forward calls other ops (a composite, or a
// backward written with tg:: ops) owns all of that time: the table answers "which of the
// calls I made took the time", and its rows add up to the time spent inside ops, with
// nothing counted twice. What no row holds (the user's own code, the engine's bookkeeping
// between backwards) is the step's time minus the sum of the rows.
//
// Off, the cost is one relaxed atomic load per op. One Profiler at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tg {

/// One row of a profile: the calls of one op in one phase ("forward" or "backward"; for an
/// optimizer "step" or "zero_grad"), with their total wall time.
struct OpTime {
  std::string op;
  std::string phase;
  int64_t calls = 0;
  double seconds = 0;
};

/// Records op times from construction until stop() or destruction (see the file comment).
class Profiler {
 public:
  Profiler();  // MisuseError if another Profiler is running
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  /// Stops recording; results() keeps what was recorded until a new Profiler starts (there
  /// is one table, and a new Profiler clears it).
  void stop();
  /// Forgets what was recorded so far (and keeps recording, if running).
  void reset();
  /// The rows, the most time first (ties: by op, then phase).
  std::vector<OpTime> results() const;

 private:
  bool running_ = true;
};

namespace detail {

extern std::atomic<bool> g_profiling;  // defined in profiler.cpp

/// Times one call: an op's forward or backward, or an optimizer's step. Only the outermost
/// scope on a thread records; scopes inside it add nothing (their time is the outer one's).
/// `op` and `phase` must outlive the Profiler (string literals, an op's kName).
class ProfileScope {
 public:
  ProfileScope(std::string_view op, std::string_view phase) {
    if (g_profiling.load(std::memory_order_relaxed)) begin(op, phase);
  }
  ~ProfileScope() {
    if (counted_) end();
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  void begin(std::string_view op, std::string_view phase);
  void end();
  bool active_ = false;   // this scope is recording (it is the outermost)
  bool counted_ = false;  // this scope raised the nesting depth
  std::string_view op_, phase_;
  int64_t start_ns_ = 0;
};

}  // namespace detail
}  // namespace tg
