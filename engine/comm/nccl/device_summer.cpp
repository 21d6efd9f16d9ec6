#include "engine/comm/nccl/device_summer.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/comm/nccl/nccl_comm.h"
#include "engine/core/error.h"

namespace mavg {
namespace {

// True when every rank of `comm` is on a distinct GPU (collective): each rank's PCI bus id,
// hashed into 52 bits (exact in a double), summed into its slot.
bool DistinctDevices(Communicator& comm) {
  std::vector<double> keys(static_cast<size_t>(comm.WorldSize()), 0.0);
  keys[static_cast<size_t>(comm.Rank())] =
      static_cast<double>(std::hash<std::string>{}(CurrentCudaBusId()) & ((uint64_t{1} << 52) - 1));
  comm.AllReduceSum(std::span<double>(keys));
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) {
      if (keys[i] == keys[j]) return false;
    }
  }
  return true;
}

void CheckContiguous(MatrixView v) {
  MAVG_CHECK(v.Contiguous(), "NCCL sums take contiguous tensors ({}x{} with stride {})", v.rows,
             v.cols, v.stride);
}

class NcclPendingSum final : public PendingSum {
 public:
  explicit NcclPendingSum(NcclComm& comm) : comm_(comm) {}
  ~NcclPendingSum() override {
    try {
      Wait();
    } catch (...) {  // a failure is reported by the Wait() of the next sum
    }
  }
  void Wait() override {
    if (!waited_) seconds_ = comm_.WaitStarted();
    waited_ = true;
  }
  double Seconds() const override { return seconds_; }

 private:
  NcclComm& comm_;  // not owned
  double seconds_ = 0.0;
  bool waited_ = false;
};

class NcclSummer final : public DeviceSummer {
 public:
  explicit NcclSummer(std::unique_ptr<NcclComm> comm) : comm_(std::move(comm)) {}

  void AllReduceSum(MatrixView v) override { StartAllReduceSum(v)->Wait(); }
  std::unique_ptr<PendingSum> StartAllReduceSum(MatrixView v) override {
    CheckContiguous(v);
    comm_->StartAllReduceSum(v.data, static_cast<size_t>(v.Size()));
    return std::make_unique<NcclPendingSum>(*comm_);
  }
  void Broadcast(MatrixView v, int root) override {
    CheckContiguous(v);
    comm_->Broadcast(v.data, static_cast<size_t>(v.Size()), root);
  }

 private:
  std::unique_ptr<NcclComm> comm_;
};

}  // namespace

std::unique_ptr<DeviceSummer> CreateNcclSummer(Backend& backend, Communicator& comm) {
  MAVG_CHECK(backend.Kind() == DeviceKind::kCuda, "parallel.comm nccl needs device: cuda");
  if (!DistinctDevices(comm)) {
    if (comm.Rank() == 0) {
      spdlog::warn(
          "[comm] parallel.comm nccl: ranks share a GPU (NCCL needs one rank per device); "
          "averaging host-staged over MPI instead");
    }
    return nullptr;
  }
  std::vector<float> id = comm.Rank() == 0 ? NewNcclUniqueId() : std::vector<float>();
  double size = static_cast<double>(id.size());
  comm.AllReduceMax(std::span<double>(&size, 1));
  id.resize(static_cast<size_t>(size));
  comm.Broadcast(std::span<float>(id), 0);  // MPI copies the bytes as they are
  return std::make_unique<NcclSummer>(CreateNcclComm(backend, id, comm.Rank(), comm.WorldSize()));
}

}  // namespace mavg
