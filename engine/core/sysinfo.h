#pragma once
// Facts about the running process's environment.

#include <string>

namespace mavg {

// Current time as ISO-8601 UTC, e.g. 2026-11-30T12:34:56Z.
std::string UtcNow();
std::string HostName();

}  // namespace mavg
