// core/atomic_file.cpp — see atomic_file.h.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include "core/error.h"

namespace tg {
namespace {

std::string errno_text(int err) { return std::system_category().message(err); }

// The pid in "<name>.tmp-<pid>-<n>", or -1 when `file` is not such a temporary of `name`.
pid_t temporary_owner(std::string_view file, std::string_view name) {
  const std::string prefix = std::string(name) + ".tmp-";
  if (!file.starts_with(prefix)) return -1;
  file.remove_prefix(prefix.size());
  pid_t pid = -1;
  const auto r = std::from_chars(file.data(), file.data() + file.size(), pid);
  if (r.ec != std::errc() || r.ptr == file.data() + file.size() || *r.ptr != '-') return -1;
  return pid > 0 ? pid : -1;
}

// kill(pid, 0) sends nothing; it fails with ESRCH when no process has `pid` in this
// process's pid namespace (the one getpid() numbered the temporaries in; /proc may show
// another). Anything else, EPERM included, counts as alive: a temporary left too long is
// harmless, one removed under a live writer is not.
bool process_is_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// The temporaries this process is writing now (file names). A temporary that carries this
// process's pid but is not among them was left by an earlier process that had the same pid:
// pids are reused, and a fresh container numbers its processes the same way every time.
std::mutex in_flight_mutex;
std::set<std::string> in_flight;

bool is_in_flight(const std::string& file) {
  std::lock_guard lock(in_flight_mutex);
  return in_flight.count(file) > 0;
}

}  // namespace

int remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string name = p.filename().string();
  std::error_code ec;
  int removed = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    const pid_t owner = temporary_owner(file, name);
    if (owner < 0) continue;
    if (owner == ::getpid() ? is_in_flight(file) : !process_is_gone(owner)) continue;
    std::error_code gone;
    if (fs::remove(it->path(), gone)) ++removed;
  }
  return removed;
}

void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view what) {
  remove_stale_temporaries(path);
  // A name no other writer uses: this process's id, plus a counter for its threads. Should
  // the name exist all the same (a leftover the clean-up could not remove), take the next.
  static std::atomic<uint64_t> counter{0};
  // The temporary's name is in `in_flight` from before it is created until this function
  // returns, renamed or removed, so that no clean-up (of another thread) takes it for stale.
  struct InFlight {
    std::string file;
    void set(std::string next) {
      std::lock_guard lock(in_flight_mutex);
      in_flight.erase(file);
      file = std::move(next);
      in_flight.insert(file);
    }
    ~InFlight() {
      std::lock_guard lock(in_flight_mutex);
      in_flight.erase(file);
    }
  } registered;
  const std::string name = std::filesystem::path(path).filename().string();
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string suffix = fmt::format(".tmp-{}-{}", ::getpid(), counter++);
    registered.set(name + suffix);
    tmp = path + suffix;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) break;
  }
  const auto give_up = [&](const char* step, int err, bool remove) {
    if (remove) ::unlink(tmp.c_str());
    detail::raise<ValueError>("{}: cannot save '{}': {} '{}' failed: {}", what, path, step, tmp,
                              errno_text(err));
  };
  if (fd < 0) give_up("creating", errno, false);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) {
      const int err = errno;
      ::close(fd);
      give_up("writing", err, true);
    }
    done += static_cast<size_t>(wrote);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    give_up("flushing", err, true);
  }
  if (::close(fd) != 0) give_up("closing", errno, true);
  if (::rename(tmp.c_str(), path.c_str()) != 0) give_up("renaming", errno, true);
  // Best effort: make the rename itself durable by flushing the directory entry.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace tg
