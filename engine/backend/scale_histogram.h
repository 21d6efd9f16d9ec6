#pragma once
// The distribution of the max-change scale factor ms (docs/algorithms.md §2d): the factor, in
// (0, 1], by which max-change multiplied a layer's update (1: not limited). The NG-SGD step
// (backend/ngsgd_small.h) counts every update into a fixed-size histogram where the step runs, so
// that its memory does not grow with the steps and histograms add (workers, ranks, checkpoints):
//   bin 0                 ms = 1, the update was not limited
//   bin i, 1 <= i <= B    -log10(ms) in ((i - 1) / P, i / P]   (P = kScaleBinsPerDecade)
//   bin B                 also every ms below 10^(-kScaleDecades)
// A quantile is the geometric centre of the bin holding it (exact for 1), within a factor
// 10^(1 / 2P) (2.9 %) of the exact quantile of the same updates above 10^(-kScaleDecades).
#include <math.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/backend/host_device.h"

namespace mavg {

inline constexpr int kScaleBinsPerDecade = 40;
inline constexpr int kScaleDecades = 6;
inline constexpr int kScaleBins = 1 + kScaleBinsPerDecade * kScaleDecades;

// The bin of a scale factor; `limited`: max-change scaled the update (ms < 1, or a ratio that
// rounded to 1), which never falls in bin 0.
MAVG_HOST_DEVICE inline int ScaleBin(double scale, bool limited) {
  if (!limited) return 0;
  const int last = kScaleBins - 1;
  if (!(scale > 0.0)) return last;  // 0 or NaN: the smallest bin
  const double x = -log10(scale) * kScaleBinsPerDecade;
  if (!(x < static_cast<double>(last))) return last;
  const int i = static_cast<int>(ceil(x));
  return i < 1 ? 1 : i;
}

// The value a bin stands for: 1 for bin 0, else the geometric centre of its range.
inline double ScaleBinValue(int bin) {
  if (bin <= 0) return 1.0;
  return pow(10.0, -(static_cast<double>(bin) - 0.5) / kScaleBinsPerDecade);
}

// The q-quantile (0 < q <= 1) of the counted scale factors: the value of the k-th smallest,
// k = ceil(q n) (at least 1), as ScaleBinValue of its bin; none for an empty histogram.
// `bins`: kScaleBins counts.
inline std::optional<double> ScaleQuantile(const std::vector<double>& bins, double q) {
  double n = 0.0;
  for (double c : bins) n += c;
  if (!(n > 0.0) || bins.size() != static_cast<size_t>(kScaleBins)) return std::nullopt;
  // The rank, robust to q n landing a rounding error above an integer (0.1 x 30).
  double k = ceil(q * n * (1.0 - 1e-12));
  if (k < 1.0) k = 1.0;
  double seen = 0.0;
  for (int bin = kScaleBins - 1; bin >= 0; --bin) {  // from the smallest factors up
    seen += bins[static_cast<size_t>(bin)];
    if (seen >= k) return ScaleBinValue(bin);
  }
  return 1.0;
}

}  // namespace mavg
