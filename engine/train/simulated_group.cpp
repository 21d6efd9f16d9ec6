// N simulated workers: N replicas in one process, combined in rank order with the same float
// operations as a deterministic all-reduce followed by the same scaling, so that a simulated
// run and N MPI ranks give bit-identical models.
#include "engine/core/error.h"
#include "engine/core/timer.h"
#include "engine/train/worker_group.h"

namespace mavg {
namespace {

// Every sum is formed at once, so a started mean is finished on return.
class DoneMean final : public PendingMean {
 public:
  explicit DoneMean(double seconds) : seconds_(seconds) {}
  double Wait() override { return 0.0; }
  double CommSeconds() const override { return seconds_; }

 private:
  double seconds_;
};

class SimulatedGroup final : public WorkerGroup {
 public:
  SimulatedGroup(Backend& backend, int world_size, int group_size, int64_t num_params)
      : WorkerGroup(backend, world_size, group_size) {
    for (int r = 0; r < world_size; ++r) AddWorker(r, num_params);
  }

  bool IsRoot() const override { return true; }
  std::string Describe() const override {
    return fmt::format("{} simulated worker(s) in this process", world_size_);
  }
  bool ProjectsWallTime() const override { return world_size_ > 1; }
  int EvalShards() const override { return 1; }
  int EvalShard() const override { return 0; }

  CommTime Mean(Scope scope, const TensorsOf& tensors, std::span<double>) override {
    const int size = scope == Scope::kWorld ? world_size_ : group_size_;
    CommTime time;
    time.agreed = true;  // one process: what it passes is every process's
    if (size == 1) return time;
    Timer t;
    std::vector<std::vector<MatrixView>> all;  // [worker][tensor]
    for (Worker& w : workers_) all.push_back(tensors(w));
    for (int first = 0; first < world_size_; first += size) {
      for (size_t j = 0; j < all[first].size(); ++j) {
        std::vector<MatrixView> replicas;
        for (int k = first; k < first + size; ++k) replicas.push_back(all[k][j]);
        backend_.MeanOfReplicas(replicas);
      }
    }
    backend_.Synchronize();
    // The groups would combine at the same time on their own devices: one group's share.
    time.comm_s = t.Seconds() * size / world_size_;
    return time;
  }

  // Every worker is local: the blocks are all filled already.
  CommTime Gather(std::span<std::byte>, std::span<double>) override {
    CommTime time;
    time.agreed = true;
    return time;
  }

  std::unique_ptr<PendingMean> StartMean(const TensorsOf& tensors) override {
    return std::make_unique<DoneMean>(Mean(Scope::kWorld, tensors, {}).comm_s);
  }

  // One process: the local sums are the sums.
  void SumOverProcesses(std::span<double> /*data*/) override {}
  void MaxOverProcesses(std::span<double> /*data*/) override {}
  void BroadcastFromRoot(MatrixView /*v*/) override {}
  void Barrier() override {}
};

}  // namespace

std::unique_ptr<WorkerGroup> CreateSimulatedGroup(Backend& backend, int world_size, int group_size,
                                                  int64_t num_params) {
  MAVG_CHECK(world_size >= 1, "a worker group needs at least one worker");
  if (group_size <= 0) group_size = world_size;
  MAVG_CHECK(world_size % group_size == 0, "group size {} does not divide {} workers", group_size,
             world_size);
  return std::make_unique<SimulatedGroup>(backend, world_size, group_size, num_params);
}

}  // namespace mavg
