// nn/distributed/process_group_single.cpp — process_group.h in a build without MPI: a world
// of one process. Every collective finds its answer already in place (the sum, average or max
// of one tensor is that tensor), so the examples run unchanged, on one process. Started by
// mpirun with more than one process, the Session stops with what to install instead of
// letting each copy train alone.
#include <cstdio>

#include "nn/distributed/process_group.h"

namespace tg::distributed {
namespace {

bool g_initialized = false;
double g_timeout = 300;

void check_tensor(const Tensor& t, const char* op) {
  TG_CHECK(t.defined(), ValueError, "{}: the tensor is undefined", op);
  TG_CHECK(t.is_contiguous(), ValueError,
           "{}: the tensor of shape {} is not contiguous; MPI sends one block of memory "
           "(call .contiguous() first)",
           op, t.shape());
  TG_CHECK(t.dtype() == kFloat32 || t.dtype() == kFloat64 || t.dtype() == kInt64, DTypeError,
           "{}: float32, float64 or int64 tensors only, got {}", op, t.dtype());
}

}  // namespace

struct Work::State {};

Session::Session(int& /*argc*/, char**& /*argv*/) {
  TG_CHECK(!g_initialized, MisuseError,
           "distributed::Session: a process group is already running (one Session per process)");
  const int p = launched_processes();
  TG_CHECK(p <= 1, DistributedError,
           "distributed::Session: started as one of {} processes, but tapegrad was built without "
           "MPI, so each would train alone; install Open MPI (apt-get install libopenmpi-dev "
           "openmpi-bin) and configure the build again",
           p);
  g_initialized = true;
}
Session::~Session() { g_initialized = false; }

bool is_initialized() { return false; }  // no MPI in this build
bool has_mpi() { return false; }
int rank() { return 0; }
int world_size() { return 1; }
double timeout_seconds() { return g_timeout; }
void set_timeout_seconds(double seconds) {
  TG_CHECK(seconds > 0, ValueError, "set_timeout_seconds: the timeout must be positive, got {}",
           seconds);
  g_timeout = seconds;
}

bool Work::test() { return true; }
void Work::wait() {}
bool Work::done() const { return true; }

Work iall_reduce(Tensor& t, ReduceOp op, const std::string& /*what*/) {
  check_tensor(t, "all_reduce");
  TG_CHECK(op != ReduceOp::Average || t.dtype() != kInt64, DTypeError,
           "all_reduce: an average of int64 tensors is not an integer; use Sum");
  return Work();
}
void all_reduce(Tensor& t, ReduceOp op) { iall_reduce(t, op).wait(); }
void broadcast(Tensor& t, int root) {
  check_tensor(t, "broadcast");
  TG_CHECK(root == 0, IndexError, "broadcast: root {} is not a rank of this run (0 .. 0)", root);
}
void barrier() {}
double all_reduce(double value, ReduceOp /*op*/) { return value; }
bool any(bool flag) { return flag; }

void abort(int code, const std::string& message) {
  if (!message.empty()) std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(code);
}

}  // namespace tg::distributed
