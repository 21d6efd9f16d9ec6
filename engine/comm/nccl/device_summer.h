#pragma once
// Sums of GPU memory between MPI ranks that each own a GPU, device to device (NCCL), for
// `parallel.comm: nccl`. Built collectively over a host communicator, which carries NCCL's
// unique id from rank 0 and tells whether the ranks' GPUs are distinct. No CUDA headers: a
// CPU-only build compiles nccl_stub.cpp.

#include <memory>

#include "engine/backend/backend.h"
#include "engine/comm/communicator.h"

namespace mavg {

class DeviceSummer {
 public:
  virtual ~DeviceSummer() = default;
  // Element-wise sum over the ranks, in place; `v` is contiguous memory of the backend the
  // summer was made for (its queued work is finished first).
  virtual void AllReduceSum(MatrixView v) = 0;
  // The same sum, started now on a communication stream and finished by Wait(); the backend's
  // stream goes on meanwhile (it must not touch `v`).
  virtual std::unique_ptr<PendingSum> StartAllReduceSum(MatrixView v) = 0;
  virtual void Broadcast(MatrixView v, int root) = 0;
};

// A summer over `comm`'s ranks on `backend`'s GPU (collective). Returns null, with a warning,
// where two ranks share a GPU (NCCL needs one rank per device): callers then host-stage.
std::unique_ptr<DeviceSummer> CreateNcclSummer(Backend& backend, Communicator& comm);

}  // namespace mavg
