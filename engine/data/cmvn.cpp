#include "engine/data/cmvn.h"

#include <cmath>

#include "engine/core/error.h"
#include "engine/data/minibatch.h"

namespace mavg {

void CmvnSums::Add(const Dataset& data, const std::vector<int>& utts) {
  MAVG_CHECK(data.dim == Dim(), "{}: CMVN sums of {} dims for {}-dimensional features", data.source,
             Dim(), data.dim);
  const int dim = data.dim;
  for (int u : utts) {
    for (int64_t f = data.offsets[u]; f < data.offsets[u + 1]; ++f) {
      const float* x = data.Frame(f);
      for (int d = 0; d < dim; ++d) {
        sum[d] += x[d];
        sum_sq[d] += static_cast<double>(x[d]) * x[d];
      }
    }
    frames += static_cast<double>(data.UttFrames(u));
  }
}

void CmvnSums::Add(const CmvnSums& other) {
  MAVG_CHECK(other.Dim() == Dim(), "CMVN sums of {} and {} dims", Dim(), other.Dim());
  for (int d = 0; d < Dim(); ++d) {
    sum[d] += other.sum[d];
    sum_sq[d] += other.sum_sq[d];
  }
  frames += other.frames;
}

std::vector<double> CmvnSums::Packed() const {
  std::vector<double> p(sum);
  p.insert(p.end(), sum_sq.begin(), sum_sq.end());
  p.push_back(frames);
  return p;
}

CmvnSums CmvnSums::Unpacked(std::span<const double> packed) {
  MAVG_CHECK(packed.size() % 2 == 1, "packed CMVN sums of even size {}", packed.size());
  const int dim = static_cast<int>(packed.size() / 2);
  CmvnSums s(dim);
  std::copy(packed.begin(), packed.begin() + dim, s.sum.begin());
  std::copy(packed.begin() + dim, packed.begin() + 2 * dim, s.sum_sq.begin());
  s.frames = packed.back();
  return s;
}

CmvnStats CmvnSums::Stats(const std::string& source) const {
  MAVG_CHECK(frames > 0, "{}: no frames to estimate CMVN from", source);
  const int dim = Dim();
  std::vector<double> var(dim);
  double mean_var = 0.0;
  for (int d = 0; d < dim; ++d) {
    const double mean = sum[d] / frames;
    var[d] = std::max(0.0, sum_sq[d] / frames - mean * mean);
    mean_var += var[d] / dim;
  }
  const double floor = 1e-4 * mean_var + 1e-10;
  CmvnStats cmvn;
  cmvn.shift.resize(dim);
  cmvn.scale.resize(dim);
  for (int d = 0; d < dim; ++d) {
    cmvn.shift[d] = static_cast<float>(-sum[d] / frames);
    cmvn.scale[d] = static_cast<float>(1.0 / std::sqrt(std::max(var[d], floor)));
  }
  return cmvn;
}

CmvnStats ComputeGlobalCmvn(const Dataset& data) {
  CmvnSums sums(data.dim);
  sums.Add(data, AllUtterances(data));
  return sums.Stats(data.source);
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
