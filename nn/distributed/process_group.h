// nn/distributed/process_group.h — the processes of a data-parallel run, and the collectives
// they call together: broadcast, all-reduce, barrier. The engine underneath is MPI (Debian's
// Open MPI); this file is all of tapegrad that talks to it.
//
//   mpirun -np 2 build/bin/tiny_lm train ...      starts 2 copies of the program ("ranks")
//
//   tg::distributed::Session session(argc, argv);  // MPI_Init, and MPI_Finalize at the end
//   int r = tg::distributed::rank();               // 0 or 1
//   int p = tg::distributed::world_size();         // 2
//   tg::distributed::all_reduce(grad, tg::distributed::ReduceOp::Sum);  // every rank: the sum
//
// A collective is a call every rank makes, in the same order, on tensors of the same shape
// and dtype: all_reduce(t) leaves in t, on every rank, the elementwise sum (or average, max)
// of the p tensors. Nothing here checks that the ranks agree on shapes: MPI cannot, and a
// mismatch shows as a wrong result or a wait. What is checked is the wait: every collective
// gives up after timeout_seconds() with an error naming the operation, the rank and what it
// was waiting for, so that a rank that crashed or hangs makes the others stop with a message
// instead of waiting forever (NCCL's watchdog does the same). A program that catches a tg::Error
// on one rank calls abort(), which stops every rank (MPI_Abort).
//
// Without MPI (tapegrad built where `find_package(MPI)` found none) the same calls run a world
// of one process: rank 0 of 1, where every collective leaves its tensor as it is, so the
// examples and tests build and run the same code. Launched under mpirun with more than one
// process, such a build stops with an error saying what to install.
//
// PyTorch equivalent: torch.distributed (init_process_group("mpi"), get_rank,
// get_world_size, broadcast, all_reduce(op=ReduceOp.SUM, async_op=True), barrier).
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "core/core.h"

namespace tg::distributed {

/// How all_reduce combines the p tensors.
enum class ReduceOp { Sum, Average, Max };

/// Starts the process group for the life of the object: MPI_Init on construction (from
/// main, before any other call here) and MPI_Finalize on destruction. One per process.
/// Started as a single process (no mpirun, or mpirun -np 1) it starts no MPI: the world of
/// one, as without a Session.
/// Unless TAPEGRAD_NUM_THREADS is set, each of the k processes on one machine then uses
/// cores / k threads (tg::set_num_threads), so that together they do not oversubscribe it,
/// or, where mpirun bound it to some cores, as many threads as those cores.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

/// How many processes the launcher started this one among, read from the environment mpirun
/// sets (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE of a PMI launcher); 1 without one.
inline int launched_processes() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 1;
}

/// Whether MPI is running (a Session started by mpirun among several processes).
bool is_initialized();
/// Whether this build has MPI (false: the world of one).
bool has_mpi();
/// This process's index, 0 .. world_size() - 1 (0 without a Session).
int rank();
/// The number of processes (1 without a Session).
int world_size();
// Without a Session every collective is the world of one's (it leaves its tensor as it is),
// unless mpirun started several processes: then it is a MisuseError asking for the Session,
// since each process would otherwise train alone.

/// Seconds a collective waits for the other ranks before it fails with an error. The default
/// is 300, or the environment variable TAPEGRAD_DIST_TIMEOUT.
double timeout_seconds();
void set_timeout_seconds(double seconds);

/// A collective started but perhaps not finished (MPI's request): its tensor must stay alive
/// and untouched until wait() returns. Waiting twice is allowed (the second does nothing).
class Work {
 public:
  Work() = default;
  /// Lets MPI move the operation on without waiting; true once it has finished.
  bool test();
  /// Blocks until the operation has finished, or throws after timeout_seconds().
  void wait();
  bool done() const;

  struct State;  // the MPI request and what the message needs (process_group.cpp)

 private:
  friend Work iall_reduce(Tensor& t, ReduceOp op, const std::string& what);
  std::shared_ptr<State> state_;
};

/// Starts an all-reduce of `t` in place (contiguous float32 or float64) and returns at once;
/// the result is in `t` after Work::wait(). `what` names it in a timeout's message.
Work iall_reduce(Tensor& t, ReduceOp op, const std::string& what = "all_reduce");
/// iall_reduce and wait.
void all_reduce(Tensor& t, ReduceOp op = ReduceOp::Sum);
/// The reduction of one number over the ranks (the mean loss of a data-parallel step).
double all_reduce(double value, ReduceOp op);
/// Copies rank `root`'s `t` (contiguous) into `t` on every other rank.
void broadcast(Tensor& t, int root = 0);
/// Returns when every rank has called it.
void barrier();
/// Whether `flag` is true on any rank (an all-reduce of one value): how the ranks agree to
/// stop together (Ctrl-C or a time limit on one of them).
bool any(bool flag);

/// Stops every rank of the run with exit code `code` (MPI_Abort), after printing `message` (if
/// any) to stderr; without a Session it exits this process alone.
[[noreturn]] void abort(int code, const std::string& message);

}  // namespace tg::distributed
