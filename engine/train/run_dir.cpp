#include "engine/train/run_dir.h"

#include <signal.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/files.h"

namespace mavg {

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

RunDir RunDir::Prepare(const std::string& path, bool force) {
  MakeDirs(path);
  int attempt = 1;
  const std::string state_path = path + "/state.json";
  if (PathExists(state_path)) {
    nlohmann::json state;
    try {
      state = nlohmann::json::parse(ReadFile(state_path));
    } catch (const nlohmann::json::exception&) {
      state = nlohmann::json::object();  // unreadable state: treat as an interrupted attempt
    }
    const std::string status = state.value("status", "");
    if (status == "completed") {
      MAVG_CHECK(force, "{}: already holds a completed run (use --force to overwrite it)", path);
    }
    if (status == "running" && state.value("host", "") == HostName()) {
      const int pid = state.value("pid", 0);
      MAVG_CHECK(pid <= 0 || pid == getpid() || kill(pid, 0) != 0,
                 "{}: a run is in progress there (pid {})", path, pid);
    }
    attempt = state.value("attempt", 0) + 1;
    for (const char* name : {"metrics.jsonl", "result.json", "model.bin"}) {
      std::filesystem::remove(path + "/" + name);
    }
    std::filesystem::remove_all(path + "/checkpoint");
  }
  return RunDir(path, attempt, UtcNow());
}

void RunDir::WriteState(const std::string& status, const nlohmann::json& extra) {
  nlohmann::json state = {{"status", status},   {"attempt", attempt_}, {"pid", getpid()},
                          {"host", HostName()}, {"started", started_}, {"heartbeat", UtcNow()}};
  for (const auto& [key, value] : extra.items()) state[key] = value;
  WriteJson("state.json", state);
}

void RunDir::AppendMetrics(const nlohmann::json& epoch) {
  AppendLine(File("metrics.jsonl"), epoch.dump());
}

void RunDir::WriteJson(const std::string& name, const nlohmann::json& value) const {
  WriteFileAtomic(File(name), value.dump(2) + "\n");
}

}  // namespace mavg
