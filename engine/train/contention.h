#pragma once
// Whether an epoch shared its cores with other work. Two measures of the epoch, both recorded:
//   CPU use   the process's CPU seconds over the epoch's wall seconds x the threads it computes
//             on; 1 for a run alone on its cores with work enough for every thread
//   CPU wait  the seconds its threads were ready to run but had no core (the kernel's run-queue
//             delay), over the wall seconds x those threads: ~0 alone, however many threads
// An epoch is contended when its threads waited for a core more than kContendedWait of its
// time: its times then measure the sharing, not the run. CPU use alone cannot say it: it is
// also low where the work is too small to spread over the threads (a 64-unit network on 2
// threads uses 0.50 of them on a quiet machine). Measured (scripts/bench/contention.sh, the
// quickstart's network, 2 cores): 1 thread waited 0 % of the time with no busy loop, 1 % beside
// one (it keeps a core: not slowed), 32 % beside two; 2 threads 1 %, 6 % and 19 %. Where the kernel
// keeps no run-queue delay, CPU use below kContendedCpuUse decides instead. Contended epochs are
// flagged in the log, their record (epoch_row.h) and every report that shows their times.

#include <optional>

namespace mavg {

inline constexpr double kContendedWait = 0.05;
inline constexpr double kContendedCpuUse = 0.75;

// CPU seconds / (wall seconds x threads); nullopt when there is nothing to judge (no wall time,
// no threads).
std::optional<double> EpochCpuUse(double cpu_s, double wall_s, int threads);

// From the epoch's CPU use and, where known, its run-queue seconds over its wall seconds.
bool Contended(double cpu_use, std::optional<double> cpu_wait);

}  // namespace mavg
