#include "engine/train/averager.h"

#include <algorithm>

#include "engine/core/error.h"

namespace mavg {

AveragerOptions AveragerOptionsFrom(const ParallelConfig& parallel, int world_size) {
  AveragerOptions o;
  o.bmuf = parallel.algorithm == AveragingAlgorithm::kBmuf;
  const double eta =
      parallel.bmuf.block_momentum < 0 ? 1.0 - 1.0 / world_size : parallel.bmuf.block_momentum;
  o.block_momentum = static_cast<float>(eta);
  o.block_lr = static_cast<float>(parallel.bmuf.block_lr);
  o.nesterov = parallel.bmuf.nesterov;
  o.overlap = parallel.overlap;
  if (parallel.average_every_global > 0) {
    o.global_every = parallel.average_every_global / parallel.average_every;
  }
  o.average_momentum = parallel.average_momentum;
  return o;
}

Averager::Averager(Backend& backend, WorkerGroup& group, const AveragerOptions& options,
                   int64_t num_params)
    : backend_(backend), group_(group), options_(options) {
  MAVG_CHECK(options.global_every >= 1, "global combines every {} combine points",
             options.global_every);
  if (group.WorldSize() == 1) return;  // nothing to combine: no state
  if (options.bmuf) {
    global_ = Matrix(backend, 1, num_params);
    delta_ = Matrix(backend, 1, num_params);
    scratch_ = Matrix(backend, 1, num_params);
  }
  if (options.overlap) {
    for (size_t i = 0; i < group.Workers().size(); ++i) {
      snapshot_.emplace_back(backend, 1, num_params);
      mean_.emplace_back(backend, 1, num_params);
    }
  }
}

void Averager::Reset() {
  agree_ = true;
  has_pending_ = false;
  pending_.reset();
  if (!options_.bmuf || group_.WorldSize() == 1) return;
  backend_.Copy(group_.Workers()[0].params, global_);
  backend_.Fill(delta_, 0.0f);
}

void Averager::BeginEpoch() {
  projected_s_ = 0.0;
  if (!options_.bmuf || !options_.nesterov || group_.WorldSize() == 1) return;
  StartPoint(true);
  for (Worker& w : group_.Workers()) backend_.Copy(global_, w.params);
}

std::vector<MatrixView> Averager::Combined(Worker& w) const {
  std::vector<MatrixView> v = {w.params};
  if (options_.average_momentum) {
    for (MatrixView s : w.optimizer->State()) v.push_back(s);
  }
  return v;
}

void Averager::Account(const CommTime& t) {
  for (Worker& w : group_.Workers()) {
    w.stats.comm_s += t.comm_s;
    w.stats.wait_s += t.wait_s;
  }
}

void Averager::Filter(ConstMatrixView mean) {
  // global_ holds the block's start point S: W_g(t-1), plus ηΔ(t-1) with Nesterov. The block
  // "gradient" is the workers' progress from there, G = W̄ - S, and
  //   Δ(t) = ηΔ(t-1) + ζG,  W_g(t) = W_g(t-1) + Δ(t) = W̄ + (ζ-1)G [+ ηΔ(t-1) if classical],
  // the second form exactly W̄ when η = 0, ζ = 1 (plain averaging, bit for bit).
  const float eta = options_.block_momentum, zeta = options_.block_lr;
  backend_.Copy(mean, scratch_);
  backend_.Axpby(-1.0f, global_, 1.0f, scratch_);  // G
  backend_.Copy(delta_, global_);
  backend_.Axpby(zeta - 1.0f, scratch_, options_.nesterov ? 0.0f : eta, global_);
  backend_.Axpby(zeta, scratch_, eta, delta_);  // Δ(t)
  backend_.Axpby(1.0f, mean, 1.0f, global_);    // W_g(t)
}

void Averager::StartPoint(bool look_ahead) {
  // Nesterov: the next block starts at the look-ahead W_g + ηΔ, where its G is measured from.
  if (look_ahead) backend_.Axpby(options_.block_momentum, delta_, 1.0f, global_);
}

double Averager::FinishPending() {
  CommTime t;
  if (pending_) {
    t.wait_s = pending_->Wait();
    t.comm_s = pending_->CommSeconds();
    pending_.reset();
  } else {  // finished before a checkpoint
    t.wait_s = pending_wait_s_;
    t.comm_s = pending_comm_s_;
  }
  Account(t);
  has_pending_ = false;
  // The start point of the block that just ended, computed once for all local workers.
  ConstMatrixView start = mean_[0];
  if (options_.bmuf) {
    Filter(mean_[0]);
    StartPoint(options_.nesterov);
    start = global_;
  }
  for (size_t i = 0; i < group_.Workers().size(); ++i) {
    MatrixView p = group_.Workers()[i].params;
    backend_.Axpby(-1.0f, snapshot_[i], 1.0f, p);  // progress since the snapshot
    backend_.Axpby(1.0f, start, 1.0f, p);
  }
  return t.comm_s;
}

void Averager::Combine(int64_t index, int64_t total) {
  if (group_.WorldSize() == 1) return;
  double slowest = 0.0;
  for (Worker& w : group_.Workers()) {
    slowest = std::max(slowest, w.stats.interval_s);
    w.stats.interval_s = 0.0;
  }
  const bool last = index == total;
  const bool global = last || index % options_.global_every == 0;
  if (!global) {
    const CommTime t = group_.Mean(Scope::kGroup, [this](Worker& w) { return Combined(w); });
    Account(t);
    projected_s_ += slowest + t.comm_s;
    agree_ = group_.GroupSize() == group_.WorldSize();
    return;
  }
  if (options_.overlap) {
    double block = slowest;
    if (has_pending_) {
      block = std::max(slowest, FinishPending());
    }
    projected_s_ += block;
    if (!last) {  // start this block's mean; the next block trains meanwhile
      for (size_t i = 0; i < group_.Workers().size(); ++i) {
        backend_.Copy(group_.Workers()[i].params, snapshot_[i]);
        backend_.Copy(group_.Workers()[i].params, mean_[i]);
      }
      const int first = group_.Workers()[0].rank;  // local workers have consecutive ranks
      pending_ = group_.StartMean(
          [this, first](Worker& w) { return std::vector<MatrixView>{mean_[w.rank - first]}; });
      has_pending_ = true;
      agree_ = false;
      return;
    }
    slowest = 0.0;  // counted above; the epoch's last block is combined synchronously
  }
  const CommTime t = group_.Mean(Scope::kWorld, [this](Worker& w) { return Combined(w); });
  Account(t);
  projected_s_ += slowest + t.comm_s;
  agree_ = true;
  if (!options_.bmuf) return;
  std::vector<Worker>& workers = group_.Workers();
  Filter(workers[0].params);
  StartPoint(options_.nesterov && !last);  // an epoch ends on the model W_g itself
  for (Worker& w : workers) backend_.Copy(global_, w.params);
}

nlohmann::json Averager::Save(const CheckpointDir& dir, int64_t generation, bool root) {
  nlohmann::json state = {{"agree", agree_}, {"pending", has_pending_}};
  if (group_.WorldSize() == 1) return state;
  if (options_.bmuf && root) dir.WriteTensors(backend_, generation, "bmuf", {global_, delta_});
  if (has_pending_) {
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
  return state;
}

void Averager::Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state) {
  agree_ = state.value("agree", true);
  has_pending_ = state.value("pending", false);
  pending_.reset();
  if (group_.WorldSize() == 1) return;
  if (options_.bmuf) dir.ReadTensors(backend_, generation, "bmuf", {global_, delta_});
  if (has_pending_) {
    MAVG_CHECK(options_.overlap,
               "{}: the checkpoint has an overlapped mean pending, but "
               "parallel.overlap is off",
               dir.Path());
    for (size_t i = 0; i < mean_.size(); ++i) {
      dir.ReadTensors(backend_, generation, "pending", {mean_[i]});
      dir.ReadTensors(backend_, generation, fmt::format("snapshot-{}", group_.Workers()[i].rank),
                      {snapshot_[i]});
    }
    pending_comm_s_ = state.value("pending_comm_s", 0.0);
    pending_wait_s_ = state.value("pending_wait_s", 0.0);
  }
}

}  // namespace mavg
