// A build without CUDA or without NCCL: parallel.comm nccl is unavailable.
#include "engine/comm/nccl/nccl_comm.h"
#include "engine/core/error.h"

namespace mavg {
namespace {

[[noreturn]] void NoNccl() {
  MAVG_FAIL(
      "parallel.comm nccl requested but mavg was built without CUDA or NCCL; use "
      "parallel.comm: mpi");
}

}  // namespace

std::vector<float> NewNcclUniqueId() { NoNccl(); }
std::string CurrentCudaBusId() { NoNccl(); }
std::unique_ptr<NcclComm> CreateNcclComm(Backend&, const std::vector<float>&, int, int) {
  NoNccl();
}

}  // namespace mavg
