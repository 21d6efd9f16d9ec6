#pragma once
// Facts about the running process's environment.

#include <cstdint>
#include <optional>
#include <string>

namespace mavg {

// Current time as ISO-8601 UTC, e.g. 2026-11-30T12:34:56Z.
std::string UtcNow();
std::string HostName();
// Whether process `pid` of this host is alive: it exists and is not a zombie (a killed process
// whose parent died may wait a while for a reaper, and kill(pid, 0) still finds it).
bool ProcessAlive(int pid);
// This process's resident set size now and at its peak (VmRSS, VmHWM of /proc/self/status),
// in bytes; -1 where the kernel does not say.
int64_t ResidentBytes();
int64_t PeakResidentBytes();
// CPU seconds this process has used so far, user and system, over all its threads.
double ProcessCpuSeconds();
// Seconds this process's live threads have spent ready to run but waiting for a core (the run
// queue delay of /proc/self/task/*/schedstat, summed); nullopt where the kernel does not say.
std::optional<double> ProcessRunQueueSeconds();
// The same for the calling thread alone (/proc/thread-self/schedstat).
std::optional<double> ThisThreadRunQueueSeconds();

}  // namespace mavg
