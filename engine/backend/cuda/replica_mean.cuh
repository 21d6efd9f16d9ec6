#pragma once
// The replica mean of simulated workers: every replica set to (((r0 + r1) + r2) + ...) * (1/N),
// in float and in rank order: the same operations as the CPU backend's sequence of Axpby calls
// and as a deterministic all-reduce followed by the scaling, so the models agree bit for bit.
// One pass over memory for all N replicas.

#include "engine/backend/cuda/dev_view.cuh"

namespace mavg::cuda {

// Replicas one launch combines (passed by value as kernel parameters); more fall back to
// pairwise sums.
constexpr int kMaxFusedReplicas = 64;

struct ReplicaMeanBody {
  float* data[kMaxFusedReplicas];
  int64_t stride[kMaxFusedReplicas];
  int n;
  float inv_n;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    float acc = data[0][r * stride[0] + c];
    for (int k = 1; k < n; ++k) acc = data[k][r * stride[k] + c] + acc;
    acc = inv_n * acc;
    for (int k = 0; k < n; ++k) data[k][r * stride[k] + c] = acc;
  }
};

}  // namespace mavg::cuda
