#pragma once
// The workers one process drives, and the collectives between them:
//   simulated  N replicas in this process, combined here in rank order (simulated_group.cpp;
//              between combines they may step at once: step_lanes.h)
//   rank       one MPI rank (one worker) with its communicator (and a group communicator for
//              two-level averaging); device data host-staged (rank_group.cpp)
// The epoch loop, the averaging algorithms (averager.h) and the metrics are written once over
// this interface. Every collective is called by every process at the same point.

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/comm/communicator.h"
#include "engine/config/config.h"
#include "engine/train/worker.h"

namespace mavg {

// Which workers a mean runs over: the g consecutive workers of each worker's group (two-level
// averaging; ranks r with the same r / g), or all N.
enum class Scope { kGroup, kWorld };

// Seconds a combine cost this process.
struct CommTime {
  double wait_s = 0.0;  // blocked for slower workers (or for an overlapped sum to finish)
  double comm_s = 0.0;  // the communication itself
  bool agreed = false;  // Mean's `agree` holds the max over all processes
};

// The tensors of a worker that one combine averages: its parameters, and with
// parallel.optimizer_state average its optimizer state too. Views into the worker's own memory.
using TensorsOf = std::function<std::vector<MatrixView>(Worker&)>;

// A world mean started by WorkerGroup::StartMean.
class PendingMean {
 public:
  virtual ~PendingMean() = default;
  // Returns when every local worker's tensor holds the mean; the seconds blocked waiting.
  virtual double Wait() = 0;
  // Seconds the communication took (after Wait).
  virtual double CommSeconds() const = 0;
};

class WorkerGroup {
 public:
  virtual ~WorkerGroup() = default;
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  int WorldSize() const { return world_size_; }  // N
  int GroupSize() const { return group_size_; }  // g (N without two-level averaging)
  // The workers of this process, in rank order; each owns its parameters.
  std::vector<Worker>& Workers() { return workers_; }
  const std::vector<Worker>& Workers() const { return workers_; }
  // The process that writes the run's files.
  virtual bool IsRoot() const = 0;
  virtual std::string Describe() const = 0;
  // True where block times are measured in one process and projected onto N devices.
  virtual bool ProjectsWallTime() const = 0;
  // Held-out sets are split into EvalShards() shards; this process evaluates EvalShard().
  virtual int EvalShards() const = 0;
  virtual int EvalShard() const = 0;

  // Every local worker's tensors become the mean over its scope, summed in rank order (bit
  // for bit the same in every implementation with deterministic sums). `agree` (may be
  // empty): values every process passes that a world mean maxes over all processes on the
  // way, in the collective that waits for the slower ones, so that flags agreed at a combine
  // cost no collective of their own; CommTime::agreed says whether it did (not for a group
  // mean of several processes).
  virtual CommTime Mean(Scope scope, const TensorsOf& tensors, std::span<double> agree) = 0;
  // Mean(kWorld, ...) of one tensor per worker, finished by the handle's Wait(); the tensors
  // must not be touched before. At most one at a time.
  virtual std::unique_ptr<PendingMean> StartMean(const TensorsOf& tensors) = 0;
  // Every worker's block of `all` on every process: `all` holds N equal blocks, worker r's at
  // r * all.size() / N; each process fills its local workers' blocks before the call and the
  // call fills the others (compressed deltas: train/delta_exchange.h). `agree` as a world
  // Mean's. CommTime::comm_s is the gather's own time.
  virtual CommTime Gather(std::span<std::byte> all, std::span<double> agree) = 0;
  // Element-wise sum / max over the processes (each passes what its local workers hold).
  virtual void SumOverProcesses(std::span<double> data) = 0;
  virtual void MaxOverProcesses(std::span<double> data) = 0;
  // The root process's `v` on every process.
  virtual void BroadcastFromRoot(MatrixView v) = 0;
  virtual void Barrier() = 0;

 protected:
  WorkerGroup(Backend& backend, int world_size, int group_size)
      : backend_(backend), world_size_(world_size), group_size_(group_size) {}
  // Adds the local worker `rank` with zero parameters [1 x num_params].
  void AddWorker(int rank, int64_t num_params);

  Backend& backend_;  // not owned
  int world_size_;
  int group_size_;
  std::vector<Worker> workers_;  // [local workers], owned
};

// The group parallel.mode asks for: simulated replicas, or this rank of `world` (not owned).
std::unique_ptr<WorkerGroup> CreateWorkerGroup(const ParallelConfig& parallel, Backend& backend,
                                               Communicator& world, int64_t num_params);
// N replicas in this process (groups of g consecutive replicas; g = 0: one group of all).
std::unique_ptr<WorkerGroup> CreateSimulatedGroup(Backend& backend, int world_size, int group_size,
                                                  int64_t num_params);
// This rank's one worker over `world` (not owned; must outlive the group). With 0 < g < N a
// group communicator is split off (collective). `nccl`: sum GPU tensors device to device
// where every rank owns its GPU (else host-staged).
std::unique_ptr<WorkerGroup> CreateRankGroup(Backend& backend, Communicator& world, int group_size,
                                             int64_t num_params, bool nccl = false);

}  // namespace mavg
