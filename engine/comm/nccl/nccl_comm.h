#pragma once
// NCCL on one GPU, below the Communicator level: what nccl_comm.cu (nvcc, C++17) provides to
// device_summer.cpp, which does the host-side agreement over MPI. No CUDA headers; a CPU-only
// build compiles nccl_stub.cpp instead.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend.h"

namespace mavg {

class NcclComm {
 public:
  virtual ~NcclComm() = default;
  // In place on device memory, on NCCL's own stream, after the backend's queued work.
  virtual void StartAllReduceSum(float* data, size_t n) = 0;
  // Waits for the last started sum; returns the seconds from its start.
  virtual double WaitStarted() = 0;
  virtual void Broadcast(float* data, size_t n, int root) = 0;
};

// A new NCCL unique id as raw bytes packed in floats (rank 0 makes it, the others receive it).
std::vector<float> NewNcclUniqueId();
// The PCI bus id of the current CUDA device (ranks on one GPU have equal ids).
std::string CurrentCudaBusId();
// Rank `rank` of `size` joining the NCCL communicator of `unique_id` (collective).
std::unique_ptr<NcclComm> CreateNcclComm(Backend& backend, const std::vector<float>& unique_id,
                                         int rank, int size);

}  // namespace mavg
