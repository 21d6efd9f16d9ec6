#include "engine/train/combine_schedule.h"

#include <algorithm>
#include <utility>

#include "engine/core/error.h"

namespace mavg {

void AccountCombine(WorkerGroup& group, const CommTime& t) {
  for (Worker& w : group.Workers()) {
    w.stats.comm_s += t.comm_s;
    w.stats.wait_s += t.wait_s;
  }
}

SynchronousSchedule::SynchronousSchedule(Backend& backend, WorkerGroup& group,
                                         CombineFilter& filter, TensorsOf tensors,
                                         DeltaExchange* exchange)
    : backend_(backend),
      group_(group),
      filter_(filter),
      tensors_(std::move(tensors)),
      exchange_(exchange) {}

void SynchronousSchedule::Combine(int64_t index, int64_t total, double slowest,
                                  CombineTally& tally) {
  const CommTime t = exchange_ ? exchange_->Mean(tally.stop_flags)
                               : group_.Mean(Scope::kWorld, tensors_, tally.stop_flags);
  tally.stop_flags_agreed = t.agreed;
  AccountCombine(group_, t);
  tally.projected_s += slowest + t.comm_s;
  tally.agree = true;
  std::vector<Worker>& workers = group_.Workers();
  if (const Matrix* start = filter_.Apply(workers[0].params, index == total)) {
    for (Worker& w : workers) backend_.Copy(*start, w.params);
  }
  if (exchange_) exchange_->SetAnchor(false);  // the next block's start
}

void SynchronousSchedule::Load(const CheckpointDir& dir, int64_t, const nlohmann::json& state) {
  MAVG_CHECK(!state.value("pending", false),
             "{}: the checkpoint has an overlapped mean pending, but "
             "parallel.overlap is off",
             dir.Path());
}

OverlappedSchedule::OverlappedSchedule(Backend& backend, WorkerGroup& group, CombineFilter& filter,
                                       TensorsOf tensors, int64_t num_params)
    : backend_(backend),
      group_(group),
      filter_(filter),
      last_(backend, group, filter, std::move(tensors)) {
  for (size_t i = 0; i < group.Workers().size(); ++i) {
    snapshot_.emplace_back(backend, 1, num_params);
    mean_.emplace_back(backend, 1, num_params);
  }
}

void OverlappedSchedule::Reset() {
  has_pending_ = false;
  pending_.reset();
}

double OverlappedSchedule::FinishPending() {
  CommTime t;
  if (pending_) {
    t.wait_s = pending_->Wait();
    t.comm_s = pending_->CommSeconds();
    pending_.reset();
  } else {  // finished before a checkpoint
    t.wait_s = pending_wait_s_;
    t.comm_s = pending_comm_s_;
  }
  AccountCombine(group_, t);
  has_pending_ = false;
  // The start point of the block that just ended, computed once for all local workers.
  ConstMatrixView start = mean_[0];
  if (const Matrix* filtered = filter_.Apply(mean_[0], false)) start = *filtered;
  for (size_t i = 0; i < group_.Workers().size(); ++i) {
    MatrixView p = group_.Workers()[i].params;
    backend_.Axpby(-1.0f, snapshot_[i], 1.0f, p);  // progress since the snapshot
    backend_.Axpby(1.0f, start, 1.0f, p);
  }
  return t.comm_s;
}

void OverlappedSchedule::Combine(int64_t index, int64_t total, double slowest,
                                 CombineTally& tally) {
  double block = slowest;
  if (has_pending_) {
    block = std::max(slowest, FinishPending());
  }
  tally.projected_s += block;
  if (index == total) {  // its compute counted above, the epoch's last block combines at once
    last_.Combine(index, total, 0.0, tally);
    return;
  }
  // Start this block's mean; the next block trains meanwhile.
  std::vector<Worker>& workers = group_.Workers();
  for (size_t i = 0; i < workers.size(); ++i) {
    backend_.Copy(workers[i].params, snapshot_[i]);
    backend_.Copy(workers[i].params, mean_[i]);
  }
  const int first = workers[0].rank;  // local workers have consecutive ranks
  pending_ = group_.StartMean(
      [this, first](Worker& w) { return std::vector<MatrixView>{mean_[w.rank - first]}; });
  has_pending_ = true;
  tally.agree = false;
}

void OverlappedSchedule::Save(const CheckpointDir& dir, int64_t generation, bool root,
                              nlohmann::json& state) {
  if (!has_pending_) return;
  if (pending_) {  // finish the sum now; it is applied after the next block as usual
    pending_wait_s_ = pending_->Wait();
    pending_comm_s_ = pending_->CommSeconds();
    pending_.reset();
  }
  if (root) dir.WriteTensors(backend_, generation, "pending", {mean_[0]});
  for (size_t i = 0; i < snapshot_.size(); ++i) {
    dir.WriteTensors(backend_, generation, fmt::format("snapshot-{}", group_.Workers()[i].rank),
                     {snapshot_[i]});
  }
  state["pending_comm_s"] = pending_comm_s_;
  state["pending_wait_s"] = pending_wait_s_;
}

void OverlappedSchedule::Load(const CheckpointDir& dir, int64_t generation,
                              const nlohmann::json& state) {
  has_pending_ = state.value("pending", false);
  pending_.reset();
  if (!has_pending_) return;
  for (size_t i = 0; i < mean_.size(); ++i) {
    dir.ReadTensors(backend_, generation, "pending", {mean_[i]});
    dir.ReadTensors(backend_, generation, fmt::format("snapshot-{}", group_.Workers()[i].rank),
                    {snapshot_[i]});
  }
  pending_comm_s_ = state.value("pending_comm_s", 0.0);
  pending_wait_s_ = state.value("pending_wait_s", 0.0);
}

TwoLevelSchedule::TwoLevelSchedule(WorkerGroup& group, TensorsOf tensors, int64_t global_every,
                                   std::unique_ptr<CombineSchedule> global)
    : group_(group),
      tensors_(std::move(tensors)),
      global_every_(global_every),
      global_(std::move(global)) {
  MAVG_CHECK(global_every >= 1, "global combines every {} combine points", global_every);
}

void TwoLevelSchedule::Combine(int64_t index, int64_t total, double slowest, CombineTally& tally) {
  if (index == total || index % global_every_ == 0) {
    global_->Combine(index, total, slowest, tally);
    return;
  }
  const CommTime t = group_.Mean(Scope::kGroup, tensors_, {});
  AccountCombine(group_, t);
  tally.projected_s += slowest + t.comm_s;
  tally.agree = group_.GroupSize() == group_.WorldSize();
}

}  // namespace mavg
