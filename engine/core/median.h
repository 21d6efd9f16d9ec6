#pragma once
// The median of a sample (the mean of the middle two for an even count): what the benchmarks
// report of repeated timings, and what `sweep plan` takes of like runs' times.

#include <algorithm>
#include <vector>

namespace mavg {

// NaN-free input; an empty sample is the caller's to avoid.
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace mavg
