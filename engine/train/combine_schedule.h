#pragma once
// When the workers combine, over which of them, and how the communication is timed, written
// once over a WorkerGroup (docs/algorithms.md §1a, §1c, §1d). What a global combine makes of
// the workers' mean is the filter's business (combine_filter.h):
//   synchronous  at every combine point all N workers form their mean, and every worker takes
//                the filter's start point
//   overlapped   the mean of block t is formed while block t+1 trains; the worker then
//                continues from start(t) + (its progress during block t+1); the epoch's last
//                block is combined synchronously
//   two-level    composed with either of the above: groups of g workers average at every
//                combine point, and the schedule it wraps combines all N only at every
//                (K2/K)-th and at the epoch's last
// Every process calls every combine at the same point (worker_group.h), and whatever a
// schedule keeps between combines (an overlapped block's snapshot and mean) is checkpointed,
// so a resumed run continues bit for bit.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/train/checkpoint.h"
#include "engine/train/combine_filter.h"
#include "engine/train/combine_policy.h"
#include "engine/train/delta_exchange.h"
#include "engine/train/worker_group.h"

namespace mavg {

// What combines report; the averager keeps it across them.
struct CombineTally {
  // Projected wall time of the epoch so far: per block the slowest worker's compute plus the
  // communication that is not hidden.
  double projected_s = 0.0;
  bool agree = true;  // every worker holds the same parameters
  // In: values every process passes to be maxed over all processes (the trainer's stop
  // flags); out: whether a world mean of this combine did (WorkerGroup::Mean's `agree`).
  std::span<double> stop_flags;
  bool stop_flags_agreed = false;
  // Out: false where this point exchanged nothing (a streamed fragment's merge): the stop
  // flags are neither carried nor to be agreed on here, but at the next point that exchanges.
  bool stop_check = true;
};

// A combine's seconds go to every local worker's statistics.
void AccountCombine(WorkerGroup& group, const CommTime& t);

class CombineSchedule {
 public:
  virtual ~CombineSchedule() = default;

  // May refine the epoch's combine points (the policy's) into the points this schedule acts
  // at (streaming: each fragment's own); called by every process with the same plan.
  virtual void PlanEpoch(CombinePlan& /*plan*/) {}
  // Drops a combine in flight (at the start, after a newbob rejection).
  virtual void Reset() = 0;
  // The start of a fresh epoch, after the filter's start point went to the workers.
  virtual void BeginEpoch() {}
  // After the block that ends at combine point `index` (1-based) of the epoch's `total`, on
  // which the slowest local worker computed for `slowest` seconds: combines, adds comm_s /
  // wait_s to the local workers' statistics and the block's time to tally.projected_s, and
  // sets tally.agree. The epoch's last combine leaves every worker with the filter's model.
  virtual void Combine(int64_t index, int64_t total, double slowest, CombineTally& tally) = 0;
  // A combine whose result is not applied yet.
  virtual bool Pending() const = 0;
  // Exchanges among the workers, and bytes every worker put into them, in the first `points`
  // combine points of the epoch (`payload`: the bytes of one combine of the whole model).
  virtual int64_t Exchanges(int64_t points) const { return points; }
  virtual int64_t Bytes(int64_t points, int64_t payload) const { return points * payload; }
  // ... received: `received` per combine of the whole model (the mean, or the others' deltas).
  virtual int64_t BytesReceived(int64_t points, int64_t received) const {
    return points * received;
  }

  // Checkpoint of what is kept between combines: keys into `state` (meta.json), tensors into
  // `dir` (`root` writes what all processes share, every process its workers' own).
  virtual void Save(const CheckpointDir& dir, int64_t generation, bool root,
                    nlohmann::json& state) = 0;
  virtual void Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state) = 0;
};

// Combines all workers at every combine point it is called for.
class SynchronousSchedule final : public CombineSchedule {
 public:
  // `filter` (and `exchange`, if given) are not owned and must outlive the schedule. With an
  // exchange the mean is formed from the workers' compressed deltas (delta_exchange.h), else
  // from their tensors.
  SynchronousSchedule(Backend& backend, WorkerGroup& group, CombineFilter& filter,
                      TensorsOf tensors, DeltaExchange* exchange = nullptr);

  void Reset() override {}
  void Combine(int64_t index, int64_t total, double slowest, CombineTally& tally) override;
  bool Pending() const override { return false; }
  void Save(const CheckpointDir&, int64_t, bool, nlohmann::json&) override {}
  // Rejects a checkpoint with an overlapped mean pending.
  void Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state) override;

 private:
  Backend& backend_;         // not owned
  WorkerGroup& group_;       // not owned
  CombineFilter& filter_;    // not owned
  TensorsOf tensors_;        // what a combine averages
  DeltaExchange* exchange_;  // not owned; null: uncompressed means
};

// One-step-delayed world means (docs/algorithms.md §1c). The block's projected time is
// max(its compute, the pending mean's communication). Checkpointed with the keys "pending",
// "pending_comm_s", "pending_wait_s" and the tensor sets "pending" (the mean) and
// "snapshot-<rank>".
class OverlappedSchedule final : public CombineSchedule {
 public:
  // `filter` is not owned and must outlive the schedule. The mean in flight covers the
  // parameters only ([1 x num_params] per worker).
  OverlappedSchedule(Backend& backend, WorkerGroup& group, CombineFilter& filter, TensorsOf tensors,
                     int64_t num_params);

  void Reset() override;
  void Combine(int64_t index, int64_t total, double slowest, CombineTally& tally) override;
  bool Pending() const override { return has_pending_; }
  void Save(const CheckpointDir& dir, int64_t generation, bool root,
            nlohmann::json& state) override;
  void Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state) override;

 private:
  // Applies the pending mean: worker = start + (worker - snapshot). Returns the seconds its
  // communication took.
  double FinishPending();

  Backend& backend_;                      // not owned
  WorkerGroup& group_;                    // not owned
  CombineFilter& filter_;                 // not owned
  SynchronousSchedule last_;              // the epoch's last block
  std::vector<Matrix> snapshot_;          // [local worker] S_i, the model whose mean is pending
  std::vector<Matrix> mean_;              // [local worker] the buffer being averaged
  std::unique_ptr<PendingMean> pending_;  // the mean in flight, if any
  bool has_pending_ = false;              // a mean awaits applying (in flight or finished)
  double pending_comm_s_ = 0.0, pending_wait_s_ = 0.0;  // of a mean finished by a checkpoint
};

// Two-level averaging (docs/algorithms.md §1d): a group mean at every combine point but every
// `global_every`-th and the epoch's last, which go to the wrapped schedule.
class TwoLevelSchedule final : public CombineSchedule {
 public:
  TwoLevelSchedule(WorkerGroup& group, TensorsOf tensors, int64_t global_every,
                   std::unique_ptr<CombineSchedule> global);

  void Reset() override { global_->Reset(); }
  void Combine(int64_t index, int64_t total, double slowest, CombineTally& tally) override;
  bool Pending() const override { return global_->Pending(); }
  void Save(const CheckpointDir& dir, int64_t generation, bool root,
            nlohmann::json& state) override {
    global_->Save(dir, generation, root, state);
  }
  void Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state) override {
    global_->Load(dir, generation, state);
  }

 private:
  WorkerGroup& group_;                       // not owned
  TensorsOf tensors_;                        // what a group combine averages
  int64_t global_every_;                     // K2 / K
  std::unique_ptr<CombineSchedule> global_;  // owned: the global combines
};

}  // namespace mavg
