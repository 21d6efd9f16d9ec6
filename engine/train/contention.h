#pragma once
// Whether an epoch shared its cores with other work: its CPU use is the process's CPU seconds
// over the epoch's wall seconds times the threads it computes on. A run alone on its cores keeps
// its threads busy (the CPU backend's helpers spin briefly between tasks and sleep only in the
// gaps of its serial work); beside a busy process on as many cores as threads, the OS shares
// them out and the run gets a part (measured by scripts/bench/contention.sh: quiet 2-thread
// epochs 0.85-1.0, beside one busy process on 2 cores ~0.6, beside two ~0.5; one thread beside
// one busy process keeps its core, ~1.0: not slowed, not flagged). Such an epoch's times measure
// the sharing, not the run: it is flagged contended in the log, its record (epoch_row.h) and
// every report that shows its times.

#include <optional>

namespace mavg {

// Below this CPU use an epoch is contended.
inline constexpr double kContendedCpuUse = 0.75;

// CPU seconds / (wall seconds x threads); nullopt when there is nothing to judge (no wall time,
// no threads).
std::optional<double> EpochCpuUse(double cpu_s, double wall_s, int threads);

inline bool Contended(double cpu_use) { return cpu_use < kContendedCpuUse; }

}  // namespace mavg
