// core/profiler.cpp — the op-time table behind tg::Profiler.
#include "core/profiler.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "core/error.h"

namespace tg {
namespace detail {

std::atomic<bool> g_profiling{false};

namespace {

struct Row {
  int64_t calls = 0;
  int64_t ns = 0;
};

// Keyed by (op, phase); the views point at string literals and op names, which live for
// the whole program. A map keeps the rows in a stable order for the tie-break.
struct Table {
  std::mutex mutex;
  std::map<std::pair<std::string_view, std::string_view>, Row> rows;
};

Table& table() {
  static Table t;
  return t;
}

thread_local int t_depth = 0;  // profile scopes open on this thread

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void ProfileScope::begin(std::string_view op, std::string_view phase) {
  counted_ = true;
  if (t_depth++ > 0) return;  // inside another scope: its time is the outer one's
  active_ = true;
  op_ = op;
  phase_ = phase;
  start_ns_ = now_ns();
}

void ProfileScope::end() {
  --t_depth;
  if (!active_) return;
  const int64_t elapsed = now_ns() - start_ns_;
  Table& t = table();
  std::lock_guard lock(t.mutex);
  Row& row = t.rows[{op_, phase_}];
  ++row.calls;
  row.ns += elapsed;
}

}  // namespace detail

Profiler::Profiler() {
  bool expected = false;
  TG_CHECK(detail::g_profiling.compare_exchange_strong(expected, true), MisuseError,
           "Profiler: another Profiler is already running; stop it (or let it go out of scope) "
           "before starting a new one");
  reset();
}

Profiler::~Profiler() { stop(); }

void Profiler::stop() {
  if (!running_) return;
  running_ = false;
  detail::g_profiling.store(false, std::memory_order_relaxed);
}

void Profiler::reset() {
  detail::Table& t = detail::table();
  std::lock_guard lock(t.mutex);
  t.rows.clear();
}

std::vector<OpTime> Profiler::results() const {
  std::vector<OpTime> out;
  {
    detail::Table& t = detail::table();
    std::lock_guard lock(t.mutex);
    for (const auto& [key, row] : t.rows) {
      out.push_back({std::string(key.first), std::string(key.second), row.calls,
                     static_cast<double>(row.ns) * 1e-9});
    }
  }
  // The map's order (op, then phase) breaks ties; a stable sort keeps it.
  std::stable_sort(out.begin(), out.end(),
                   [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
  return out;
}
}  // namespace tg
