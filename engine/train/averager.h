#pragma once
// How the workers' parameters combine at the end of every block of minibatches, written once
// over a WorkerGroup (docs/algorithms.md §1b-§1d):
//   average   the model is the workers' mean W̄ (Su & Chen)
//   bmuf      block momentum (Chen & Huo 2016): G = W̄ - S (S: where the block started),
//             Δ = ηΔ + ζG, W_g += Δ; the next block starts from S = W_g + ηΔ (Nesterov) or W_g
//   overlap   the mean of block t is formed while block t+1 trains; the worker then continues
//             from start(t) + (its progress during block t+1)
//   two-level groups of g workers average at every combine point, all workers only at every
//             (K2/K)-th and at the epoch's last
// The state (W_g, Δ; the snapshot and mean of an overlapped block) is held identically by
// every process, never communicated, and checkpointed, so a resumed run continues bit for bit.

#include <nlohmann/json.hpp>

#include "engine/backend/backend.h"
#include "engine/config/config.h"
#include "engine/train/checkpoint.h"
#include "engine/train/worker_group.h"

namespace mavg {

struct AveragerOptions {
  bool bmuf = false;
  float block_momentum = 0.0f;  // η
  float block_lr = 1.0f;        // ζ
  bool nesterov = true;
  bool overlap = false;
  int64_t global_every = 1;  // combine points per global combine (K2 / K; 1: flat)
  bool average_momentum = false;
};

// From the config; η < 0 becomes 1 - 1/N.
AveragerOptions AveragerOptionsFrom(const ParallelConfig& parallel, int world_size);

class Averager {
 public:
  Averager(Backend& backend, WorkerGroup& group, const AveragerOptions& options,
           int64_t num_params);

  // What the workers hold now (identical on all) becomes the global model; Δ = 0. At the
  // start, after a newbob rejection.
  void Reset();
  // Start of a fresh epoch (not one resumed inside): the workers take the block start point.
  void BeginEpoch();
  // After the block that ends at combine point `index` (1-based) of the epoch's `total`.
  // Adds comm_s / wait_s to the local workers' statistics and the block's time to
  // ProjectedSeconds(). The epoch's last combine leaves every worker with the model (W_g).
  void Combine(int64_t index, int64_t total);
  // True when every worker holds the same parameters (false after a group combine and while
  // an overlapped mean is pending).
  bool WorkersAgree() const { return agree_; }

  // Projected wall time of the epoch so far: per block the slowest worker's compute plus the
  // communication that is not hidden.
  double ProjectedSeconds() const { return projected_s_; }
  void SetProjectedSeconds(double s) { projected_s_ = s; }

  // Checkpoint: every process calls Save (root writes what all share, every process its
  // workers' own tensors); the returned JSON goes into meta.json and back into Load.
  nlohmann::json Save(const CheckpointDir& dir, int64_t generation, bool root);
  void Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state);

 private:
  std::vector<MatrixView> Combined(Worker& w) const;
  void Account(const CommTime& t);
  // BMUF: W_g and Δ from the workers' mean.
  void Filter(ConstMatrixView mean);
  // The next block's start point into global_: W_g, or W_g + ηΔ with look_ahead.
  void StartPoint(bool look_ahead);
  // Applies the pending overlapped mean: worker = start + (worker - snapshot). Returns the
  // seconds its communication took.
  double FinishPending();

  Backend& backend_;    // not owned
  WorkerGroup& group_;  // not owned
  AveragerOptions options_;
  Matrix global_, delta_, scratch_;  // BMUF: [1 x P] W_g (the block's start point), Δ, G
  std::vector<Matrix> snapshot_;     // overlap: [local worker] S_i, the model whose mean is pending
  std::vector<Matrix> mean_;         // overlap: [local worker] the buffer being averaged
  std::unique_ptr<PendingMean> pending_;  // overlap: the mean in flight, if any
  bool has_pending_ = false;              // a mean awaits applying (in flight or finished)
  double pending_comm_s_ = 0.0, pending_wait_s_ = 0.0;  // of a mean finished by a checkpoint
  bool agree_ = true;
  double projected_s_ = 0.0;
};

}  // namespace mavg
