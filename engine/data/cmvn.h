#pragma once
// Global cepstral mean and variance normalisation, estimated on the training frames and
// applied to every set as x' = (x + shift) * scale with shift = -mean, scale = 1/stddev.
// Variances are floored at 1e-4 x their average (plus 1e-10) so that a dimension that is
// (nearly) constant in training, like the border pixels of an image, does not explode.
//
// The statistics are sums (CmvnSums), so that processes holding different shards of the
// training data can add theirs: shard by shard, in shard order, the same sums in the same
// order give the same bits whether one process holds every shard or each rank one.

#include <span>
#include <string>
#include <vector>

#include "engine/data/dataset.h"

namespace mavg {

struct CmvnStats {
  std::vector<float> shift;  // [dim] -mean
  std::vector<float> scale;  // [dim] 1 / floored stddev
};

struct CmvnSums {
  std::vector<double> sum, sum_sq;  // [dim]
  double frames = 0.0;

  explicit CmvnSums(int dim = 0) : sum(dim, 0.0), sum_sq(dim, 0.0) {}
  int Dim() const { return static_cast<int>(sum.size()); }
  // Adds the frames of the utterances `utts` of `data`, in that order.
  void Add(const Dataset& data, const std::vector<int>& utts);
  // Element-wise sum with `other` (this + other, in that order).
  void Add(const CmvnSums& other);
  // [2 * dim + 1]: sum, sum_sq, frames (for a sum over processes) and back.
  std::vector<double> Packed() const;
  static CmvnSums Unpacked(std::span<const double> packed);
  // The normalisation; throws naming `source` when there are no frames.
  CmvnStats Stats(const std::string& source) const;
};

// Over every utterance of `data`, in order.
CmvnStats ComputeGlobalCmvn(const Dataset& data);
// Applies shift/scale to every frame in place.
void ApplyCmvn(const CmvnStats& cmvn, Dataset& data);

}  // namespace mavg
