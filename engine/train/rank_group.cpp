// One worker per process (an MPI rank) over its communicator. Device data is host-staged:
// copied to a host buffer, reduced there, copied back (in place for contiguous CPU memory).
#include "engine/core/error.h"
#include "engine/core/timer.h"
#include "engine/train/worker_group.h"

namespace mavg {
namespace {

// The host memory a collective works on for `v`: `v` itself for contiguous CPU memory, else a
// copy in `staging` (copy it back with FromHost).
std::span<float> ToHost(Backend& backend, MatrixView v, std::vector<float>& staging) {
  if (backend.Kind() == DeviceKind::kCpu && v.Contiguous()) {
    staging.clear();
    return std::span<float>(v.data, static_cast<size_t>(v.Size()));
  }
  staging.resize(static_cast<size_t>(v.Size()));
  backend.CopyToHost(v, staging.data());
  return std::span<float>(staging);
}
void FromHost(Backend& backend, const std::vector<float>& staging, MatrixView v) {
  if (!staging.empty()) backend.CopyFromHost(staging.data(), v);
}

// Runs a host-side collective `op` on `v` (in place, or host-staged).
template <typename Op>
void OnHost(Backend& backend, MatrixView v, std::vector<float>& staging, const Op& op) {
  op(ToHost(backend, v, staging));
  FromHost(backend, staging, v);
}

class RankMean final : public PendingMean {
 public:
  RankMean(Backend& backend, MatrixView v, Communicator& comm)
      : backend_(backend), v_(v), inv_n_(1.0f / static_cast<float>(comm.WorldSize())) {
    const std::span<float> host = ToHost(backend, v, staging_);
    sum_ = comm.StartAllReduceSum(host);
  }
  double Wait() override {
    if (done_) return 0.0;
    Timer t;
    sum_->Wait();
    const double blocked = t.Seconds();
    FromHost(backend_, staging_, v_);
    backend_.Axpby(inv_n_, v_, 0.0f, v_);
    done_ = true;
    return blocked;
  }
  double CommSeconds() const override { return sum_->Seconds(); }

 private:
  Backend& backend_;  // not owned
  MatrixView v_;      // not owned: the worker's tensor
  float inv_n_;
  std::vector<float> staging_;  // host copy of v_ for device memory
  std::unique_ptr<PendingSum> sum_;
  bool done_ = false;
};

class RankGroup final : public WorkerGroup {
 public:
  RankGroup(Backend& backend, Communicator& world, int group_size, int64_t num_params)
      : WorkerGroup(backend, world.WorldSize(), group_size), world_(world) {
    AddWorker(world.Rank(), num_params);
    if (group_size < world.WorldSize()) {
      owned_group_ = world.Split(world.Rank() / group_size);
      group_ = owned_group_.get();
    } else {
      group_ = &world_;
    }
  }

  bool IsRoot() const override { return world_.Rank() == 0; }
  std::string Describe() const override {
    return fmt::format("rank {} of {} ({})", world_.Rank(), world_size_, world_.Name());
  }
  bool ProjectsWallTime() const override { return false; }
  int EvalShards() const override { return world_size_; }
  int EvalShard() const override { return world_.Rank(); }

  CommTime Mean(Scope scope, const TensorsOf& tensors) override {
    Communicator& comm = scope == Scope::kWorld ? world_ : *group_;
    CommTime time;
    if (comm.WorldSize() == 1) return time;
    Timer t;
    comm.Barrier();  // time blocked waiting for slower ranks
    time.wait_s = t.Seconds();
    t.Reset();
    const float inv_n = 1.0f / static_cast<float>(comm.WorldSize());
    for (MatrixView v : tensors(workers_[0])) {
      OnHost(backend_, v, staging_, [&](std::span<float> host) { comm.AllReduceSum(host); });
      backend_.Axpby(inv_n, v, 0.0f, v);
    }
    backend_.Synchronize();
    time.comm_s = t.Seconds();
    return time;
  }

  std::unique_ptr<PendingMean> StartMean(const TensorsOf& tensors) override {
    const std::vector<MatrixView> v = tensors(workers_[0]);
    MAVG_CHECK(v.size() == 1, "an overlapped mean takes one tensor per worker");
    backend_.Synchronize();
    return std::make_unique<RankMean>(backend_, v[0], world_);
  }

  void SumOverProcesses(std::span<double> data) override { world_.AllReduceSum(data); }
  void MaxOverProcesses(std::span<double> data) override { world_.AllReduceMax(data); }
  void BroadcastFromRoot(MatrixView v) override {
    if (world_size_ == 1) return;
    OnHost(backend_, v, staging_, [&](std::span<float> host) { world_.Broadcast(host, 0); });
  }
  void Barrier() override { world_.Barrier(); }

 private:
  Communicator& world_;                        // not owned
  std::unique_ptr<Communicator> owned_group_;  // the group's ranks (two-level), or null
  Communicator* group_;                        // [not null] owned_group_ or &world_
  std::vector<float> staging_;                 // host copies of device tensors
};

}  // namespace

std::unique_ptr<WorkerGroup> CreateRankGroup(Backend& backend, Communicator& world, int group_size,
                                             int64_t num_params) {
  const int n = world.WorldSize();
  if (group_size <= 0) group_size = n;
  MAVG_CHECK(n % group_size == 0, "group size {} does not divide {} ranks", group_size, n);
  return std::make_unique<RankGroup>(backend, world, group_size, num_params);
}

}  // namespace mavg
