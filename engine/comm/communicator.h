#pragma once
// Collectives between workers that are separate processes (MPI ranks) or threads (tests).
// Algorithms (periodic averaging, CV reduction, agreeing on stop flags) are written once above
// this interface and never see MPI. A world of size 1 costs nothing. All buffers are host
// memory; device data is staged by the caller.
//
// Simulated workers are not a communicator: the simulated worker group (train/worker_group.h)
// holds N replicas in one process and averages them itself, in rank order, so that it matches a
// deterministic communicator bit for bit.

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace mavg {

// A sum started by Communicator::StartAllReduceSum. Wait() returns when the buffer holds the
// sum (at once for communicators that sum synchronously); the buffer must not be touched
// before. Destroying a pending sum waits for it.
class PendingSum {
 public:
  virtual ~PendingSum() = default;
  virtual void Wait() = 0;
  // Seconds the communication itself took (valid after Wait()).
  virtual double Seconds() const = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int Rank() const = 0;
  virtual int WorldSize() const = 0;
  bool IsDistributed() const { return WorldSize() > 1; }
  // Rank among the ranks on this machine (they share its GPUs); Rank() where all are local.
  virtual int NodeRank() const { return Rank(); }
  // "local", "mpi", "threads"; for logs and result files.
  virtual std::string Name() const = 0;

  // Element-wise sum over all ranks, in place, on every rank. A deterministic communicator
  // forms every sum in rank order, ((x0 + x1) + x2) + ..., so results are reproducible and
  // equal to simulated workers' averaging.
  virtual void AllReduceSum(std::span<float> data) = 0;
  virtual void AllReduceSum(std::span<double> data) = 0;
  // Element-wise maximum (for agreeing on flags: NaN seen, stop requested).
  virtual void AllReduceMax(std::span<double> data) = 0;
  virtual void Broadcast(std::span<float> data, int root) = 0;
  // Every rank's block of `all` on every rank: `all` holds WorldSize() equal blocks, rank r's
  // at r * all.size() / WorldSize(); each rank fills its own before the call, and the call
  // fills the others (MPI_Allgather in place). Packed compressed deltas travel this way.
  virtual void AllGather(std::span<std::byte> all) = 0;
  // AllReduceSum(data) started now and finished by the returned handle's Wait(), so the caller
  // can compute meanwhile (overlapped averaging). Every rank starts the same sums in the same
  // order. The default sums synchronously; MPI sums on a communication thread.
  virtual std::unique_ptr<PendingSum> StartAllReduceSum(std::span<float> data);
  // The ranks with the same `color` as one communicator, ranked as in this one (MPI_Comm_split;
  // two-level averaging's groups). Collective. Throws where a communicator cannot split.
  virtual std::unique_ptr<Communicator> Split(int color);
  virtual void Barrier() = 0;
  // Ends every rank's process group with an error (MPI_Abort); a local world just returns.
  virtual void Abort(int code) = 0;
};

// The world of one: every collective is a no-op.
std::unique_ptr<Communicator> CreateLocalCommunicator();

}  // namespace mavg
