// tests/core/atomic_file_test.cpp — atomic writes and the cleanup of killed writers'
// temporaries (core/atomic_file.h).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("tapegrad_atomic_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A pid no process can have: Linux's pids stay below PID_MAX_LIMIT (2^22 on 64-bit).
// (A child that was forked and reaped would do too, but where the pid counter wraps
// quickly, another process may take its number between the reaping and the check.)
constexpr pid_t kDeadPid = (1 << 22) + 17;

// What kill(pid, 0) answers, for the message of a failing check.
std::string kill_answer(pid_t pid) {
  const int rc = ::kill(pid, 0);
  return fmt::format("kill({}, 0) = {}{}", pid, rc,
                     rc == 0 ? "" : " errno " + std::to_string(errno));
}

TEST(AtomicFileTest, WritesReplacesAndLeavesNoTemporary) {
  const fs::path dir = fresh_dir("write");
  const std::string path = (dir / "f.bin").string();
  tg::write_file_atomically(path, "first", "test");
  EXPECT_EQ(read_file(path), "first");
  std::ifstream reader(path, std::ios::binary);  // holds the first file
  tg::write_file_atomically(path, std::string("sec\0nd", 6), "test");
  EXPECT_EQ(read_file(path), std::string("sec\0nd", 6));
  std::stringstream held;
  held << reader.rdbuf();
  EXPECT_EQ(held.str(), "first");  // replaced, not rewritten in place
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"f.bin"});
  fs::remove_all(dir);
}

TEST(AtomicFileTest, RemovesOnlyTheTemporariesOfDeadProcesses) {
  const fs::path dir = fresh_dir("stale");
  const std::string path = (dir / "checkpoint.safetensors").string();
  const std::string dead = "checkpoint.safetensors.tmp-" + std::to_string(kDeadPid) + "-3";
  // This process's pid, but not a file it is writing: an earlier process with the same pid
  // left it (in a fresh container pids repeat from run to run). Its name is the one this
  // process's first save would take.
  const std::string same_pid = "checkpoint.safetensors.tmp-" + std::to_string(::getpid()) + "-0";
  const std::string parent = "checkpoint.safetensors.tmp-" + std::to_string(::getppid()) + "-1";
  for (const std::string& name : {dead, same_pid, parent, std::string("other.tmp-1-1"),
                                  std::string("checkpoint.safetensors.tmp-x-1")})
    std::ofstream(dir / name) << "partial";
  SCOPED_TRACE(fmt::format("dead: {}; this process: {}; its parent: {}", kill_answer(kDeadPid),
                           kill_answer(::getpid()), kill_answer(::getppid())));
  EXPECT_EQ(tg::remove_stale_temporaries(path), 2);
  std::vector<std::string> kept = {parent, "checkpoint.safetensors.tmp-x-1", "other.tmp-1-1"};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(names_in(dir), kept);

  // The next save cleans up too, and is not stopped by a leftover of its own pid.
  std::ofstream(dir / dead) << "partial";
  std::ofstream(dir / same_pid) << "partial";
  tg::write_file_atomically(path, "data", "test");
  EXPECT_EQ(read_file(path), "data");
  kept.push_back("checkpoint.safetensors");
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(names_in(dir), kept);
  fs::remove_all(dir);
}

TEST(AtomicFileTest, AFailedWriteNamesThePathAndTheStep) {
  const fs::path dir = fresh_dir("fail");
  const std::string path = (dir / "missing" / "f.bin").string();
  EXPECT_TG_THROW(tg::write_file_atomically(path, "x", "test"), ValueError,
                  "test: cannot save '" + path + "'", "creating", "No such file or directory");
  EXPECT_TRUE(names_in(dir).empty());
  fs::remove_all(dir);
}

}  // namespace
