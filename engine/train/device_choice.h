#pragma once
// Which device a process of a run computes on.

#include "engine/backend/backend.h"
#include "engine/config/config.h"

namespace mavg {

// config.device with its options. On CUDA, the MPI rank that is number `node_rank` on its
// machine takes device (device_index + node_rank) mod the visible devices, so the ranks of a
// multi-GPU node spread over its GPUs (and share them when there are more ranks than GPUs).
BackendOptions RunBackendOptions(const RunConfig& config, int node_rank = 0);

}  // namespace mavg
