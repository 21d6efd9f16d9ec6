#pragma once
// Global cepstral mean and variance normalisation, estimated on the training frames and
// applied to every set as x' = (x + shift) * scale with shift = -mean, scale = 1/stddev.
// Variances are floored at 1e-4 x their average (plus 1e-10) so that a dimension that is
// (nearly) constant in training, like the border pixels of an image, does not explode.

#include <vector>

#include "engine/data/dataset.h"

namespace mavg {

struct CmvnStats {
  std::vector<float> shift;  // [dim] -mean
  std::vector<float> scale;  // [dim] 1 / floored stddev
};

CmvnStats ComputeGlobalCmvn(const Dataset& data);
// Applies shift/scale to every frame in place.
void ApplyCmvn(const CmvnStats& cmvn, Dataset& data);

}  // namespace mavg
