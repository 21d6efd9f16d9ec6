#include "engine/data/cmvn.h"

#include <cmath>

#include "engine/core/error.h"

namespace mavg {

CmvnStats ComputeGlobalCmvn(const Dataset& data) {
  MAVG_CHECK(data.NumFrames() > 0, "{}: no frames to estimate CMVN from", data.source);
  const int dim = data.dim;
  std::vector<double> sum(dim, 0.0), sum_sq(dim, 0.0);
  for (int64_t f = 0; f < data.NumFrames(); ++f) {
    const float* x = data.Frame(f);
    for (int d = 0; d < dim; ++d) {
      sum[d] += x[d];
      sum_sq[d] += static_cast<double>(x[d]) * x[d];
    }
  }
  const double n = static_cast<double>(data.NumFrames());
  std::vector<double> var(dim);
  double mean_var = 0.0;
  for (int d = 0; d < dim; ++d) {
    const double mean = sum[d] / n;
    var[d] = std::max(0.0, sum_sq[d] / n - mean * mean);
    mean_var += var[d] / dim;
  }
  const double floor = 1e-4 * mean_var + 1e-10;
  CmvnStats cmvn;
  cmvn.shift.resize(dim);
  cmvn.scale.resize(dim);
  for (int d = 0; d < dim; ++d) {
    cmvn.shift[d] = static_cast<float>(-sum[d] / n);
    cmvn.scale[d] = static_cast<float>(1.0 / std::sqrt(std::max(var[d], floor)));
  }
  return cmvn;
}

void ApplyCmvn(const CmvnStats& cmvn, Dataset& data) {
  MAVG_CHECK(static_cast<int>(cmvn.shift.size()) == data.dim &&
                 static_cast<int>(cmvn.scale.size()) == data.dim,
             "{}: CMVN has {} dims but the features have {}", data.source, cmvn.shift.size(),
             data.dim);
  for (int64_t f = 0; f < data.NumFrames(); ++f) {
    float* x = data.MutableFrame(f);
    for (int d = 0; d < data.dim; ++d) x[d] = (x[d] + cmvn.shift[d]) * cmvn.scale[d];
  }
}

}  // namespace mavg
