#include "engine/train/run_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"
#include "engine/core/sysinfo.h"
#include "engine/records/checkpoint_meta.h"
#include "engine/records/pretrain_record.h"

namespace mavg {

namespace {

// The run's state.json; an unreadable one (not JSON, not a state) reads as empty: an
// interrupted attempt.
RunStateFile ReadState(const std::string& path) {
  try {
    return ReadRunState(path).value_or(RunStateFile{});
  } catch (const std::exception&) {
    return {};
  }
}

void CheckNotRunning(const std::string& path, const RunStateFile& state) {
  if (state.status == RunState::kRunning && state.host == HostName()) {
    const int pid = static_cast<int>(state.pid.value_or(0));
    MAVG_CHECK(pid == getpid() || !ProcessAlive(pid), "{}: a run is in progress there (pid {})",
               path, pid);
  }
}

// What a run directory may hold before its first state.json: what a sweep writes before the
// run starts, and the temporary of an atomic write (core/files.h: <name>.tmp.<pid>) of one of
// those or of the run's first files, left by a process killed mid-write.
bool IsPreRunFile(const std::string& name) {
  static const char* const kFiles[] = {"sweep-config.yaml", "launcher.log", ".lock"};
  static const char* const kWritten[] = {"sweep-config.yaml", kStateFileName, "config.yaml"};
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
  MAVG_CHECK(PathExists(RunStatePath(path)), "{}: not a run directory (no {})", path,
             kStateFileName);
  const RunStateFile state = ReadState(path);
  MAVG_CHECK(state.status != RunState::kCompleted, "{}: the run is already completed", path);
  CheckNotRunning(path, state);
  const int lock = LockRunDir(path);
  // The previous attempt's result (preempted, failed) no longer describes the run.
  std::filesystem::remove(RunResultPath(path));
  return RunDir(path, state.Attempt() + 1, UtcNow(), lock);
}

void RunDir::TruncateMetrics(int epochs) const {
  const std::string path = File(kMetricsFileName);
  if (!PathExists(path)) return;
  std::string kept;
  for (const EpochLine& line : ReadEpochLines(path).lines) {  // a torn last line is dropped
    if (line.row.epoch <= epochs) kept += DumpJson(line.json) + "\n";
  }
  WriteFileAtomic(path, kept);
}

RunDir RunDir::Prepare(const std::string& path, bool force) {
  // A directory that is not a run's is never written into: mavg train --out on the wrong
  // directory would replace its config.yaml and model.bin. Besides a run directory (state.json)
  // an empty one is taken, and one that holds only what a sweep writes before the run starts,
  // or what a process killed before its first state.json can have left (a write's temporary).
  if (IsDirectory(path) && !PathExists(RunStatePath(path))) {
    std::vector<std::string> foreign;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      const std::string name = entry.path().filename().string();
      if (!IsPreRunFile(name)) foreign.push_back(name);
    }
    std::sort(foreign.begin(), foreign.end());
    MAVG_CHECK(foreign.empty(),
               "{}: exists and is not a mavg run directory (it holds {}{}); give --out a new or "
               "empty directory",
               path, foreign[0],
               foreign.size() > 1 ? fmt::format(" and {} more", foreign.size() - 1) : "");
  }
  MakeDirs(path);
  const int lock = LockRunDir(path);
  int attempt = 1;
  if (PathExists(RunStatePath(path))) {
    const RunStateFile state = ReadState(path);
    if (state.status == RunState::kCompleted) {
      MAVG_CHECK(force, "{}: already holds a completed run (use --force to overwrite it)", path);
    }
    CheckNotRunning(path, state);
    attempt = state.Attempt() + 1;
    for (const char* name : {kMetricsFileName, kPretrainFileName, kResultFileName, "model.bin"}) {
      std::filesystem::remove(path + "/" + name);
    }
    std::filesystem::remove_all(path + "/" + kCheckpointDirName);
  }
  return RunDir(path, attempt, UtcNow(), lock);
}

void RunDir::WriteState(RunState status) {
  state_.status = status;
  state_.attempt = attempt_;
  state_.pid = getpid();
  state_.host = HostName();
  state_.started = started_;
  state_.heartbeat = UtcNow();
  WriteJson(kStateFileName, ToJson(state_));
}

void RunDir::AppendMetrics(const EpochRow& epoch) {
  AppendLine(File(kMetricsFileName), DumpJson(ToJson(epoch)));
}

void RunDir::WriteResult(const RunResult& result) const {
  WriteJson(kResultFileName, ToJson(result));
}

void RunDir::WriteJson(const std::string& name, const nlohmann::json& value) const {
  WriteFileAtomic(File(name), DumpJson(value, 2) + "\n");
}

}  // namespace mavg
