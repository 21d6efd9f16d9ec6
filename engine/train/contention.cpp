#include "engine/train/contention.h"

#include <cmath>

namespace mavg {

std::optional<double> EpochCpuUse(double cpu_s, double wall_s, int threads) {
  if (!(wall_s > 0.0) || threads < 1 || !std::isfinite(cpu_s) || cpu_s < 0.0) return std::nullopt;
  return cpu_s / (wall_s * threads);
}

bool Contended(double cpu_use, std::optional<double> cpu_wait) {
  return cpu_wait ? *cpu_wait > kContendedWait : cpu_use < kContendedCpuUse;
}

}  // namespace mavg
