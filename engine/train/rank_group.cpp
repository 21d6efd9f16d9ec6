// One worker per process (an MPI rank) over its communicator. Device data is host-staged
// through page-locked buffers (copied to the host, reduced there, copied back; contiguous CPU
// memory is reduced in place), or, with parallel.comm nccl and one GPU per rank, summed device
// to device.
#include <optional>

#include "engine/comm/nccl/device_summer.h"
#include "engine/core/error.h"
#include "engine/core/timer.h"
#include "engine/train/worker_group.h"

namespace mavg {
namespace {

// The host memory a collective works on for `v`: `v` itself for contiguous CPU memory, else a
// copy in `staging`, which CopyBack() returns to `v`.
class HostView {
 public:
  HostView(Backend& backend, MatrixView v, HostStaging& staging) : backend_(backend), v_(v) {
    const size_t n = static_cast<size_t>(v.Size());
    if (backend.Kind() == DeviceKind::kCpu && v.Contiguous()) {
      host_ = std::span<float>(v.data, n);
      return;
    }
    float* p = staging.Floats(n);
    backend.CopyToHost(v, p);
    host_ = std::span<float>(p, n);
    staged_ = true;
  }
  std::span<float> Host() const { return host_; }
  void CopyBack() {
    if (staged_) backend_.CopyFromHost(host_.data(), v_);
  }

 private:
  Backend& backend_;  // not owned
  MatrixView v_;      // not owned
  std::span<float> host_;
  bool staged_ = false;
};

// Runs a host-side collective `op` on `v` (in place, or host-staged).
template <typename Op>
void OnHost(Backend& backend, MatrixView v, HostStaging& staging, const Op& op) {
  HostView h(backend, v, staging);
  op(h.Host());
  h.CopyBack();
}

// A started mean: a host-staged MPI sum or a device-to-device one, then the scaling.
class RankMean final : public PendingMean {
 public:
  RankMean(Backend& backend, MatrixView v, int world_size, std::unique_ptr<PendingSum> sum,
           std::optional<HostView> staged)
      : backend_(backend),
        v_(v),
        inv_n_(1.0f / static_cast<float>(world_size)),
        sum_(std::move(sum)),
        staged_(std::move(staged)) {}
  double Wait() override {
    if (done_) return 0.0;
    Timer t;
    sum_->Wait();
    const double blocked = t.Seconds();
    if (staged_) staged_->CopyBack();
    backend_.Axpby(inv_n_, v_, 0.0f, v_);
    done_ = true;
    return blocked;
  }
  double CommSeconds() const override { return sum_->Seconds(); }

 private:
  Backend& backend_;  // not owned
  MatrixView v_;      // not owned: the worker's tensor
  float inv_n_;
  std::unique_ptr<PendingSum> sum_;
  std::optional<HostView> staged_;  // the host copy being summed (host-staged sums)
  bool done_ = false;
};

class RankGroup final : public WorkerGroup {
 public:
  RankGroup(Backend& backend, Communicator& world, int group_size, int64_t num_params, bool nccl)
      : WorkerGroup(backend, world.WorldSize(), group_size),
        world_(world),
        staging_(backend),
        overlap_staging_(backend) {
    AddWorker(world.Rank(), num_params);
    if (group_size < world.WorldSize()) {
      owned_group_ = world.Split(world.Rank() / group_size);
      group_ = owned_group_.get();
    } else {
      group_ = &world_;
    }
    if (nccl && world.WorldSize() > 1) {
      world_sums_ = CreateNcclSummer(backend, world_);
      if (world_sums_ && group_ != &world_) group_sums_ = CreateNcclSummer(backend, *group_);
    }
  }

  bool IsRoot() const override { return world_.Rank() == 0; }
  std::string Describe() const override {
    return fmt::format("rank {} of {} ({}{})", world_.Rank(), world_size_, world_.Name(),
                       world_sums_ ? "; sums device to device over nccl" : "");
  }
  bool ProjectsWallTime() const override { return false; }
  int EvalShards() const override { return world_size_; }
  int EvalShard() const override { return world_.Rank(); }

  CommTime Mean(Scope scope, const TensorsOf& tensors, std::span<double> agree) override {
    const bool world = scope == Scope::kWorld || group_ == &world_;
    Communicator& comm = world ? world_ : *group_;
    DeviceSummer* device = world ? world_sums_.get() : group_sums_.get();
    CommTime time;
    time.agreed = world && world_size_ == 1;
    if (comm.WorldSize() == 1) return time;
    WaitForSlowerRanks(comm, world ? agree : std::span<double>(), time);
    Timer t;
    const float inv_n = 1.0f / static_cast<float>(comm.WorldSize());
    for (MatrixView v : tensors(workers_[0])) {
      if (device != nullptr) {
        device->AllReduceSum(v);
      } else {
        OnHost(backend_, v, staging_, [&](std::span<float> host) { comm.AllReduceSum(host); });
      }
      backend_.Axpby(inv_n, v, 0.0f, v);
    }
    backend_.Synchronize();
    time.comm_s = t.Seconds();
    return time;
  }

  CommTime Gather(std::span<std::byte> all, std::span<double> agree) override {
    CommTime time;
    time.agreed = world_size_ == 1;
    if (world_size_ == 1) return time;
    WaitForSlowerRanks(world_, agree, time);
    Timer t;
    world_.AllGather(all);
    time.comm_s = t.Seconds();
    return time;
  }

  std::unique_ptr<PendingMean> StartMean(const TensorsOf& tensors) override {
    const std::vector<MatrixView> v = tensors(workers_[0]);
    MAVG_CHECK(v.size() == 1, "an overlapped mean takes one tensor per worker");
    if (world_sums_) {
      return std::make_unique<RankMean>(backend_, v[0], world_size_,
                                        world_sums_->StartAllReduceSum(v[0]), std::nullopt);
    }
    backend_.Synchronize();
    HostView staged(backend_, v[0], overlap_staging_);
    std::unique_ptr<PendingSum> sum = world_.StartAllReduceSum(staged.Host());
    return std::make_unique<RankMean>(backend_, v[0], world_size_, std::move(sum),
                                      std::move(staged));
  }

  void SumOverProcesses(std::span<double> data) override { world_.AllReduceSum(data); }
  void MaxOverProcesses(std::span<double> data) override { world_.AllReduceMax(data); }
  void BroadcastFromRoot(MatrixView v) override {
    if (world_size_ == 1) return;
    if (world_sums_) {
      world_sums_->Broadcast(v, 0);
      return;
    }
    OnHost(backend_, v, staging_, [&](std::span<float> host) { world_.Broadcast(host, 0); });
  }
  void Barrier() override { world_.Barrier(); }

 private:
  // Blocks until every rank of `comm` is here, into time.wait_s: the agreement's max over the
  // world (which waits as a barrier does; time.agreed), or else a barrier.
  void WaitForSlowerRanks(Communicator& comm, std::span<double> agree, CommTime& time) {
    Timer t;
    if (!agree.empty()) {
      world_.AllReduceMax(agree);
      time.agreed = true;
    } else {
      comm.Barrier();
    }
    time.wait_s = t.Seconds();
  }

  Communicator& world_;                        // not owned
  std::unique_ptr<Communicator> owned_group_;  // the group's ranks (two-level), or null
  Communicator* group_;                        // [not null] owned_group_ or &world_
  std::unique_ptr<DeviceSummer> world_sums_;   // nccl over world_, or null (host-staged)
  std::unique_ptr<DeviceSummer> group_sums_;   // nccl over *group_ (two-level), or null
  HostStaging staging_;          // host copies of device tensors for blocking collectives
  HostStaging overlap_staging_;  // the host copy an overlapped (started) mean sums
};

}  // namespace

std::unique_ptr<WorkerGroup> CreateRankGroup(Backend& backend, Communicator& world, int group_size,
                                             int64_t num_params, bool nccl) {
  const int n = world.WorldSize();
  if (group_size <= 0) group_size = n;
  MAVG_CHECK(n % group_size == 0, "group size {} does not divide {} ranks", group_size, n);
  return std::make_unique<RankGroup>(backend, world, group_size, num_params, nccl);
}

}  // namespace mavg
