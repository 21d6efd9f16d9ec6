// NCCL sums and broadcasts of device memory, on a stream of their own.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>

#include "engine/backend/cuda/cuda_check.cuh"
#include "engine/backend/cuda/cuda_resources.cuh"
#include "engine/comm/nccl/nccl_comm.h"
#include "engine/core/timer.h"

#define NCCL_CHECK(call)                                                            \
  do {                                                                              \
    const ncclResult_t mavg_nccl_status_ = (call);                                  \
    if (mavg_nccl_status_ != ncclSuccess) {                                         \
      MAVG_FAIL("{} failed: {} ({})", #call, ncclGetErrorString(mavg_nccl_status_), \
                static_cast<int>(mavg_nccl_status_));                               \
    }                                                                               \
  } while (0)

namespace mavg {
namespace {

static_assert(sizeof(ncclUniqueId) % sizeof(float) == 0);

class NcclCommImpl final : public NcclComm {
 public:
  NcclCommImpl(Backend& backend, const std::vector<float>& unique_id, int rank, int size)
      : backend_(backend) {
    MAVG_CHECK(unique_id.size() * sizeof(float) == sizeof(ncclUniqueId),
               "NCCL unique id of {} bytes, expected {}", unique_id.size() * sizeof(float),
               sizeof(ncclUniqueId));
    ncclUniqueId id;
    std::memcpy(&id, unique_id.data(), sizeof(id));
    NCCL_CHECK(ncclCommInitRank(&comm_, size, id, rank));
  }
  ~NcclCommImpl() override {
    cudaStreamSynchronize(stream_.Get());
    ncclCommDestroy(comm_);
  }

  void StartAllReduceSum(float* data, size_t n) override {
    backend_.Synchronize();  // the data is final
    started_.Reset();
    NCCL_CHECK(ncclAllReduce(data, data, n, ncclFloat, ncclSum, comm_, stream_.Get()));
    CUDA_CHECK(cudaEventRecord(done_.Get(), stream_.Get()));
  }
  double WaitStarted() override {
    CUDA_CHECK(cudaEventSynchronize(done_.Get()));
    return started_.Seconds();
  }
  void Broadcast(float* data, size_t n, int root) override {
    backend_.Synchronize();
    NCCL_CHECK(ncclBroadcast(data, data, n, ncclFloat, root, comm_, stream_.Get()));
    stream_.Synchronize();
  }

 private:
  Backend& backend_;  // not owned
  ncclComm_t comm_ = nullptr;
  cuda::StreamHandle stream_;  // NCCL's own: the backend's stream can run meanwhile
  cuda::EventHandle done_;     // recorded after each started sum
  Timer started_;              // since the last started sum
};

}  // namespace

std::vector<float> NewNcclUniqueId() {
  ncclUniqueId id;
  NCCL_CHECK(ncclGetUniqueId(&id));
  std::vector<float> out(sizeof(id) / sizeof(float));
  std::memcpy(out.data(), &id, sizeof(id));
  return out;
}

std::string CurrentCudaBusId() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), device));
  return bus;
}

std::unique_ptr<NcclComm> CreateNcclComm(Backend& backend, const std::vector<float>& unique_id,
                                         int rank, int size) {
  return std::make_unique<NcclCommImpl>(backend, unique_id, rank, size);
}

}  // namespace mavg
