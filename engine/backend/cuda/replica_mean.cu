// The fused replica mean of simulated workers (body in replica_mean.cuh).
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"
#include "engine/backend/cuda/replica_mean.cuh"

namespace mavg::cuda {

void LaunchReplicaMean(Stream s, const MatrixView* replicas, int n) {
  MAVG_CHECK(n >= 1 && n <= kMaxFusedReplicas, "replica mean of {} replicas (1..{})", n,
             kMaxFusedReplicas);
  ReplicaMeanBody body{};
  Extent e = CommonExtent(replicas[0]);
  for (int k = 1; k < n; ++k) {
    if (!replicas[k].Contiguous()) e = Extent{replicas[0].rows, replicas[0].cols, false};
  }
  for (int k = 0; k < n; ++k) {
    const DevView d = WithExtent(replicas[k], e);
    body.data[k] = d.data;
    body.stride[k] = d.stride;
  }
  body.n = n;
  body.inv_n = 1.0f / static_cast<float>(n);
  LaunchElementwise(s, e.rows, e.cols, body);
}

}  // namespace mavg::cuda
