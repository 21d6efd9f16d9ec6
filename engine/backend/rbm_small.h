#pragma once
// The per-minibatch decisions of CD-1 RBM training (pretrain/rbm.h), as a small program over a
// Block policy (backend/block.h), so that they run where the data is and a minibatch on a GPU
// needs no host round trip: the reconstruction error is accumulated on the device, and Kaldi's
// explosion guard for Gaussian visible units (reconstruction std > 2 x data std: scale the
// parameters by data std / reconstruction std, skip the update, reset the momenta, lower the
// learning rate by 10%) is decided there and applied through device scalars.

#include <math.h>

#include <cstdint>

#include "engine/backend/block.h"
#include "engine/backend/host_device.h"

namespace mavg {

// Accumulated statistics (RbmSmallTask::stats).
enum RbmStat : int {
  kRbmReconSqError = 0,  // sum over minibatches of ||v- - v+||^2
  kRbmGuards,            // explosion-guard triggers
  kRbmNonFinite,         // minibatches whose reconstruction was not finite
  kRbmGuardPosStd,       // the last trigger's data std
  kRbmGuardNegStd,       // and reconstruction std
  kRbmStatCount
};

struct RbmSmallTask {
  int64_t rows = 0;     // N
  int64_t visible = 0;  // visible units
  bool gaussian = false;
  const float* pos_col_sums = nullptr;  // [visible] column sums of v+ (Gaussian)
  const float* neg_col_sums = nullptr;  // [visible] of v-
  const float* pos_row_sq = nullptr;    // [N] |v+_i|^2 (Gaussian)
  const float* neg_row_sq = nullptr;    // [N] |v-_i|^2
  const float* diff_row_sq = nullptr;   // [N] |v-_i - v+_i|^2
  float* lr = nullptr;                  // [1] the learning rate; lowered by 10% at a guard
  float* scale = nullptr;     // [1] out: the parameters' factor (data std / recon std, or 1)
  float* gate = nullptr;      // [1] out: 0 at a guard or a non-finite reconstruction, else 1
  float* lr_gated = nullptr;  // [1] out: lr * gate (this minibatch's step)
  double* stats = nullptr;    // [kRbmStatCount] accumulated
};

namespace rbm_small {

// Standard deviation of all N x V elements from column sums and row sums of squares (Kaldi's
// ComputeStdDev: sqrt(E[x^2] - E[x]^2)).
template <typename Block>
MAVG_HOST_DEVICE double StdDev(Block& b, const float* col_sums, const float* row_sq, int64_t rows,
                               int64_t visible) {
  const double n = static_cast<double>(rows) * static_cast<double>(visible);
  const double mean =
      b.Sum(visible, [&](int64_t i) { return static_cast<double>(col_sums[i]); }) / n;
  const double sq = b.Sum(rows, [&](int64_t i) { return static_cast<double>(row_sq[i]); }) / n;
  return sqrt(fmax(0.0, sq - mean * mean));
}

}  // namespace rbm_small

template <typename Block>
MAVG_HOST_DEVICE void RunRbmSmallTask(Block& b, const RbmSmallTask& t) {
  const double recon =
      b.Sum(t.rows, [&](int64_t i) { return static_cast<double>(t.diff_row_sq[i]); });
  double pos_std = 0.0, neg_std = 0.0;
  bool guard = false, non_finite = !isfinite(recon);
  if (t.gaussian) {
    pos_std = rbm_small::StdDev(b, t.pos_col_sums, t.pos_row_sq, t.rows, t.visible);
    neg_std = rbm_small::StdDev(b, t.neg_col_sums, t.neg_row_sq, t.rows, t.visible);
    non_finite = non_finite || !isfinite(neg_std);
    guard = !non_finite && pos_std * 2 < neg_std;
  }
  if (b.Leader()) {
    t.stats[kRbmReconSqError] += recon;
    if (non_finite) t.stats[kRbmNonFinite] += 1.0;
    if (guard) {
      t.stats[kRbmGuards] += 1.0;
      t.stats[kRbmGuardPosStd] = pos_std;
      t.stats[kRbmGuardNegStd] = neg_std;
    }
    const float gate = guard || non_finite ? 0.0f : 1.0f;
    *t.scale = guard ? static_cast<float>(pos_std / neg_std) : 1.0f;
    *t.gate = gate;
    *t.lr_gated = gate * *t.lr;
    if (guard) *t.lr *= 0.9f;
  }
  b.Sync();
}

}  // namespace mavg
