#include "engine/core/sysinfo.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace mavg {

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool ProcessAlive(int pid) {
  if (pid <= 0) return false;
  // EPERM: it exists, owned by another user (a shared host).
  if (kill(pid, 0) != 0) return errno == EPERM;
  // /proc/<pid>/stat: "pid (comm) S ...", comm may hold spaces and parentheses.
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

namespace {

// A "Name:   1234 kB" line of /proc/self/status, in bytes.
int64_t StatusKilobytes(const char* name) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t bytes = -1;
  const size_t n = std::strlen(name);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, name, n) == 0 && line[n] == ':') {
      long long kb = 0;
      if (std::sscanf(line + n + 1, "%lld", &kb) == 1) bytes = static_cast<int64_t>(kb) * 1024;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

// The run-queue delay of one thread's schedstat file ("on-cpu-ns waiting-ns slices"), in
// seconds; nullopt where the file is missing (the thread ended, or the kernel keeps none).
std::optional<double> SchedstatWaitSeconds(const std::filesystem::path& file) {
  std::ifstream in(file);
  unsigned long long on_cpu = 0, waiting = 0;
  if (!(in >> on_cpu >> waiting)) return std::nullopt;
  return 1e-9 * static_cast<double>(waiting);
}

}  // namespace

int64_t ResidentBytes() { return StatusKilobytes("VmRSS"); }
int64_t PeakResidentBytes() { return StatusKilobytes("VmHWM"); }

std::optional<double> ProcessRunQueueSeconds() {
  std::error_code ec;
  std::filesystem::directory_iterator tasks("/proc/self/task", ec);
  if (ec) return std::nullopt;
  double total = 0.0;
  bool any = false;
  for (const auto& task : tasks) {
    // (a thread that ended meanwhile has no file: skipped)
    if (const std::optional<double> waited = SchedstatWaitSeconds(task.path() / "schedstat")) {
      total += *waited;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return total;
}

std::optional<double> ThisThreadRunQueueSeconds() {
  return SchedstatWaitSeconds("/proc/thread-self/schedstat");
}

double ProcessCpuSeconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  const auto seconds = [](const timeval& t) { return t.tv_sec + 1e-6 * t.tv_usec; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace mavg
