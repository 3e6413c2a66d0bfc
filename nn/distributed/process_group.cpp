// nn/distributed/process_group.cpp — the collectives of process_group.h on MPI.
//
// Every collective is started non-blocking (MPI_Iallreduce, MPI_Ibcast, MPI_Ibarrier) and then
// waited for by polling MPI_Test against a deadline. MPI's blocking calls would wait forever
// for a rank that died or hangs; polling lets us give up with a message instead. Polling is
// also what moves a non-blocking operation on: Open MPI progresses it only inside MPI calls
// (it has no progress thread of its own), which is why DistributedDataParallel calls test()
// from its gradient hooks while backward goes on.
//
// Threads: only the thread that called MPI_Init calls MPI (MPI_THREAD_FUNNELED); the
// kernels' OpenMP threads never do.
#include "nn/distributed/process_group.h"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace tg::distributed {
namespace {

bool g_initialized = false;  // MPI is running
bool g_session = false;      // a Session is alive (with MPI, or a world of one)
double g_timeout = -1;       // < 0: not read yet from TAPEGRAD_DIST_TIMEOUT

// An MPI error code as text, for a message.
std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

void check_mpi(int code, const char* call) {
  TG_CHECK(code == MPI_SUCCESS, DistributedError, "{} failed on rank {} of {}: {}", call, rank(),
           world_size(), mpi_error(code));
}

// Without a Session, a collective is the world of one's (it returns false: nothing to send),
// unless mpirun started this process among others.
bool started(const char* op) {
  if (g_initialized) return true;
  TG_CHECK(launched_processes() <= 1, MisuseError,
           "{}: mpirun started {} processes, but the process group is not started; create a "
           "tg::distributed::Session(argc, argv) at the top of main",
           op, launched_processes());
  return false;
}

MPI_Datatype mpi_type(const Tensor& t, const char* op) {
  TG_CHECK(t.defined(), ValueError, "{}: the tensor is undefined", op);
  TG_CHECK(t.is_contiguous(), ValueError,
           "{}: the tensor of shape {} is not contiguous; MPI sends one block of memory "
           "(call .contiguous() first)",
           op, t.shape());
  switch (t.dtype()) {
    case kFloat32: return MPI_FLOAT;
    case kFloat64: return MPI_DOUBLE;
    case kInt64: return MPI_INT64_T;
    default:
      detail::raise<DTypeError>("{}: float32, float64 or int64 tensors only, got {}", op,
                                t.dtype());
  }
}

// Polls `request` until it completes or the timeout passes. The first milliseconds spin (a
// small all-reduce between processes on one machine takes microseconds), then it sleeps a
// little between polls so that a long wait does not burn a core.
void wait_for(MPI_Request& request, const std::string& what) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const double limit = timeout_seconds();
  for (int polls = 0;; ++polls) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    const double waited = std::chrono::duration<double>(clock::now() - start).count();
    TG_CHECK(waited < limit, DistributedError,
             "{}: rank {} of {} waited {:.0f} s for the other ranks and gives up: one of them "
             "failed, hangs, or called another collective (the timeout is "
             "TAPEGRAD_DIST_TIMEOUT={:.0f} s)",
             what, rank(), world_size(), waited, limit);
    if (polls > 10000) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// t /= p, in place, for the average (t is contiguous float32 or float64: mpi_type checked).
void divide(Tensor& t, int p) {
  const auto n = t.numel();
  if (t.dtype() == kFloat32) {
    float* d = t.data<float>();
    for (int64_t i = 0; i < n; ++i) d[i] /= static_cast<float>(p);
  } else {
    double* d = t.data<double>();
    for (int64_t i = 0; i < n; ++i) d[i] /= p;
  }
}

}  // namespace

struct Work::State {
  MPI_Request request = MPI_REQUEST_NULL;
  Tensor tensor;  // kept alive until the operation is over
  ReduceOp op = ReduceOp::Sum;
  std::string what;
  bool done = false;
  void finish() {
    done = true;
    if (op == ReduceOp::Average) divide(tensor, world_size());
  }
};

Session::Session(int& argc, char**& argv) {
  TG_CHECK(!g_initialized && !g_session, MisuseError,
           "distributed::Session: a process group is already running (one Session per process)");
  g_session = true;
  // One process (no launcher, or mpirun -np 1): the world of one, without starting MPI at all
  // (nothing to talk to, and MPI's start-up is not free).
  if (launched_processes() <= 1) return;
  int provided = 0;
  check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as codes (check_mpi turns them into tg errors) instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_initialized = true;
  // Processes on one machine share its cores: unless TAPEGRAD_NUM_THREADS says otherwise,
  // each takes its share of them (PyTorch's torchrun sets OMP_NUM_THREADS=1 for the same
  // reason): 2 processes of 2 threads each on 2 cores would fight over them. mpirun may have
  // bound this process to some cores already (Open MPI binds each of 2 ranks to one core);
  // then those are its share.
  if (std::getenv("TAPEGRAD_NUM_THREADS") == nullptr) {
    MPI_Comm local = MPI_COMM_NULL;
    int here = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) ==
        MPI_SUCCESS) {
      MPI_Comm_size(local, &here);
      MPI_Comm_free(&local);
    }
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    cpu_set_t mask;
    const int allowed = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : cores;
    if (allowed < cores) set_num_threads(std::max(1, allowed));  // bound by the launcher
    else if (here > 1) set_num_threads(std::max(1, cores / here));
  }
}

Session::~Session() {
  g_session = false;
  if (!g_initialized) return;
  g_initialized = false;
  MPI_Finalize();
}

bool is_initialized() { return g_initialized; }
bool has_mpi() { return true; }

int rank() {
  if (!g_initialized) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  if (!g_initialized) return 1;
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

double timeout_seconds() {
  if (g_timeout < 0) {
    g_timeout = 300;
    if (const char* env = std::getenv("TAPEGRAD_DIST_TIMEOUT")) {
      char* end = nullptr;
      const double v = std::strtod(env, &end);
      TG_CHECK(end != env && *end == '\0' && v > 0, ValueError,
               "TAPEGRAD_DIST_TIMEOUT must be a positive number of seconds, got '{}'", env);
      g_timeout = v;
    }
  }
  return g_timeout;
}

void set_timeout_seconds(double seconds) {
  TG_CHECK(seconds > 0, ValueError, "set_timeout_seconds: the timeout must be positive, got {}",
           seconds);
  g_timeout = seconds;
}

bool Work::test() {
  if (!state_ || state_->done) return true;
  int done = 0;
  check_mpi(MPI_Test(&state_->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  if (done) state_->finish();
  return done != 0;
}

void Work::wait() {
  if (!state_ || state_->done) return;
  wait_for(state_->request, state_->what);
  state_->finish();
}

bool Work::done() const { return !state_ || state_->done; }

Work iall_reduce(Tensor& t, ReduceOp op, const std::string& what) {
  const MPI_Datatype type = mpi_type(t, "all_reduce");
  TG_CHECK(op != ReduceOp::Average || t.dtype() != kInt64, DTypeError,
           "all_reduce: an average of int64 tensors is not an integer; use Sum");
  if (!started("all_reduce")) return Work();
  TG_CHECK(t.numel() <= INT32_MAX, ValueError,
           "all_reduce: {} elements is more than MPI's int count allows; split the tensor",
           t.numel());
  Work w;
  w.state_ = std::make_shared<Work::State>();
  w.state_->tensor = t;
  w.state_->op = op;
  w.state_->what = what;
  const MPI_Op mpi_op = op == ReduceOp::Max ? MPI_MAX : MPI_SUM;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, t.raw_data(), static_cast<int>(t.numel()), type, mpi_op,
                           MPI_COMM_WORLD, &w.state_->request),
            "MPI_Iallreduce");
  return w;
}

void all_reduce(Tensor& t, ReduceOp op) { iall_reduce(t, op).wait(); }

void broadcast(Tensor& t, int root) {
  const MPI_Datatype type = mpi_type(t, "broadcast");
  TG_CHECK(root >= 0 && root < world_size(), IndexError,
           "broadcast: root {} is not a rank of this run (0 .. {})", root, world_size() - 1);
  if (!started("broadcast")) return;
  TG_CHECK(t.numel() <= INT32_MAX, ValueError,
           "broadcast: {} elements is more than MPI's int count allows", t.numel());
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Ibcast(t.raw_data(), static_cast<int>(t.numel()), type, root, MPI_COMM_WORLD, &request),
      "MPI_Ibcast");
  wait_for(request, "broadcast");
}

void barrier() {
  if (!started("barrier")) return;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
  wait_for(request, "barrier");
}

double all_reduce(double value, ReduceOp op) {
  Tensor t = tensor(std::vector<double>{value});
  all_reduce(t, op);
  return t.item<double>();
}

bool any(bool flag) {
  Tensor t = tensor(std::vector<int64_t>{flag ? 1 : 0});
  all_reduce(t, ReduceOp::Max);
  return t.item<int64_t>() != 0;
}

void abort(int code, const std::string& message) {
  if (!message.empty()) std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  if (g_initialized) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace tg::distributed
