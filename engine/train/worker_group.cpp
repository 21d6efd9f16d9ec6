#include "engine/train/worker_group.h"

namespace mavg {

void WorkerGroup::AddWorker(int rank, int64_t num_params) {
  Worker w;
  w.rank = rank;
  w.params = Matrix(backend_, 1, num_params);
  w.loss = DeviceBuffer<double>(backend_, 3);
  workers_.push_back(std::move(w));
}

std::unique_ptr<WorkerGroup> CreateWorkerGroup(const ParallelConfig& parallel, Backend& backend,
                                               Communicator& world, int64_t num_params) {
  const int g = static_cast<int>(parallel.group_size);
  if (parallel.mode == ParallelMode::kMpi) {
    return CreateRankGroup(backend, world, g, num_params, parallel.comm == CommChoice::kNccl);
  }
  return CreateSimulatedGroup(backend, static_cast<int>(parallel.workers), g, num_params);
}

}  // namespace mavg
