#include "engine/train/run_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"
#include "engine/core/sysinfo.h"

namespace mavg {

namespace {

// The status a state.json records; nullopt when absent or not a known state.
std::optional<RunState> StatusOf(const nlohmann::json& state) {
  return ParseRunState(state.value("status", ""));
}

nlohmann::json ReadState(const std::string& path) {
  try {
    return nlohmann::json::parse(ReadFile(path));
  } catch (const std::exception&) {
    return nlohmann::json::object();  // unreadable state: treat as an interrupted attempt
  }
}

void CheckNotRunning(const std::string& path, const nlohmann::json& state) {
  if (StatusOf(state) == RunState::kRunning && state.value("host", "") == HostName()) {
    const int pid = state.value("pid", 0);
    MAVG_CHECK(pid == getpid() || !ProcessAlive(pid), "{}: a run is in progress there (pid {})",
               path, pid);
  }
}

// What a run directory may hold before its first state.json: what a sweep writes before the
// run starts, and the temporary of an atomic write (core/files.h: <name>.tmp.<pid>) of one of
// those or of the run's first files, left by a process killed mid-write.
bool IsPreRunFile(const std::string& name) {
  static const char* const kFiles[] = {"sweep-config.yaml", "launcher.log", ".lock"};
  static const char* const kWritten[] = {"sweep-config.yaml", "state.json", "config.yaml"};
  for (const char* file : kFiles) {
    if (name == file) return true;
  }
  for (const char* file : kWritten) {
    const std::string prefix = std::string(file) + ".tmp.";
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
        name.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
      return true;
    }
  }
  return false;
}

// An exclusive lock on <dir>/.lock: only one process works in a run directory at a time. The
// descriptor stays open (and the lock held) until the process exits.
int LockRunDir(const std::string& path) {
  const std::string lock = path + "/.lock";
  const int fd = OpenNoFollow(lock, /*lock=*/true);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    MAVG_FAIL("{}: another process is working in this run directory", path);
  }
  return fd;
}

}  // namespace

RunDir RunDir::Resume(const std::string& path) {
  const std::string state_path = path + "/state.json";
  MAVG_CHECK(PathExists(state_path), "{}: not a run directory (no state.json)", path);
  const nlohmann::json state = ReadState(state_path);
  MAVG_CHECK(StatusOf(state) != RunState::kCompleted, "{}: the run is already completed", path);
  CheckNotRunning(path, state);
  const int lock = LockRunDir(path);
  // The previous attempt's result (preempted, failed) no longer describes the run.
  std::filesystem::remove(path + "/result.json");
  return RunDir(path, state.value("attempt", 0) + 1, UtcNow(), lock);
}

void RunDir::TruncateMetrics(int epochs) const {
  const std::string path = File("metrics.jsonl");
  if (!PathExists(path)) return;
  std::string kept;
  size_t start = 0;
  const std::string text = ReadFile(path);
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    try {
      if (nlohmann::json::parse(line).value("epoch", 0) <= epochs) kept += line + "\n";
    } catch (const std::exception&) {
      // a torn last line from a killed process: drop it
    }
  }
  WriteFileAtomic(path, kept);
}

RunDir RunDir::Prepare(const std::string& path, bool force) {
  // A directory that is not a run's is never written into: mavg train --out on the wrong
  // directory would replace its config.yaml and model.bin. Besides a run directory (state.json)
  // an empty one is taken, and one that holds only what a sweep writes before the run starts,
  // or what a process killed before its first state.json can have left (a write's temporary).
  if (IsDirectory(path) && !PathExists(path + "/state.json")) {
    std::vector<std::string> foreign;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      const std::string name = entry.path().filename().string();
      if (!IsPreRunFile(name)) foreign.push_back(name);
    }
    std::sort(foreign.begin(), foreign.end());
    MAVG_CHECK(foreign.empty(),
               "{}: exists and is not a mavg run directory (it holds {}{}); give --out a new or "
               "empty directory",
               path, foreign[0], foreign.size() > 1 ? fmt::format(" and {} more", foreign.size() - 1)
                                                    : "");
  }
  MakeDirs(path);
  const int lock = LockRunDir(path);
  int attempt = 1;
  const std::string state_path = path + "/state.json";
  if (PathExists(state_path)) {
    const nlohmann::json state = ReadState(state_path);
    if (StatusOf(state) == RunState::kCompleted) {
      MAVG_CHECK(force, "{}: already holds a completed run (use --force to overwrite it)", path);
    }
    CheckNotRunning(path, state);
    attempt = state.value("attempt", 0) + 1;
    for (const char* name : {"metrics.jsonl", "pretrain.jsonl", "result.json", "model.bin"}) {
      std::filesystem::remove(path + "/" + name);
    }
    std::filesystem::remove_all(path + "/checkpoint");
  }
  return RunDir(path, attempt, UtcNow(), lock);
}

void RunDir::WriteState(RunState status, const nlohmann::json& extra) {
  nlohmann::json state = {{"status", std::string(ToString(status))},
                          {"attempt", attempt_},
                          {"pid", getpid()},
                          {"host", HostName()},
                          {"started", started_},
                          {"heartbeat", UtcNow()}};
  for (const auto& [key, value] : extra.items()) extra_[key] = value;
  for (const auto& [key, value] : extra_.items()) state[key] = value;
  WriteJson("state.json", state);
}

void RunDir::AppendMetrics(const nlohmann::json& epoch) {
  AppendLine(File("metrics.jsonl"), DumpJson(epoch));
}

void RunDir::WriteJson(const std::string& name, const nlohmann::json& value) const {
  WriteFileAtomic(File(name), DumpJson(value, 2) + "\n");
}

}  // namespace mavg
