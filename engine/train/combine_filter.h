#pragma once
// What a global combine makes of the workers' mean W̄: the point the next block starts from
// (docs/algorithms.md §1b). When the mean is formed, and over which workers, is the combine
// schedule's business (combine_schedule.h); the filter only sees the mean.
//   identity  plain averaging (Su & Chen): the workers take W̄ itself; no state
//   BMUF      block momentum (Chen & Huo 2016): G = W̄ - S (S: where the block started),
//             Δ = ηΔ + ζG, W_g += Δ; the next block starts from S = W_g + ηΔ (Nesterov) or W_g.
//             This is the outer SGD step of DiLoCo (Douillard et al. 2023) on the outer
//             gradient S - W̄ = -G with momentum η and lr ζ (parallel.outer.type nesterov or
//             momentum): with PyTorch's buffer b, Δ = -ζb, and its parameters θ are our S,
//             which is the model DiLoCo evaluates (BMUF evaluates W_g = S - ηΔ)
//   outer Adam  Adam on the outer gradient θ - W̄ (FedAdam, Reddi et al. 2021), θ the model
// A filter's state is derived from the mean alone: every process holds an identical copy,
// never communicated, and checkpointed, so a resumed run continues bit for bit.

#include <cstdint>
#include <string>
#include <utility>

#include "engine/backend/backend.h"
#include "engine/backend/device_buffer.h"
#include "engine/optim/adam.h"
#include "engine/train/checkpoint.h"

namespace mavg {

class CombineFilter {
 public:
  virtual ~CombineFilter() = default;

  // `model` (what every worker holds) becomes the global model, with no momentum. At the
  // start, and after a newbob rejection.
  virtual void Reset(ConstMatrixView model) = 0;
  // Where the first block of a fresh epoch starts; nullptr: from the model the last epoch
  // ended on, which the workers hold already.
  virtual const Matrix* EpochStart() = 0;
  // From the world mean W̄ of the block that just ended, the point the next block starts
  // from; nullptr: W̄ itself. `epoch_end`: the epoch ends here, and the point is the model it
  // evaluates and saves (no look-ahead). The result is valid until the filter's next call.
  virtual const Matrix* Apply(ConstMatrixView mean, bool epoch_end) = 0;
  // The global model, where the filter keeps one: after Reset, Load and an epoch's last Apply,
  // the model the run evaluates and saves (inside an epoch it may hold a look-ahead instead).
  // nullptr: the workers' common parameters are the model.
  virtual Matrix* Model() { return nullptr; }

  // Checkpoint: `root` writes the state every process shares.
  virtual void Save(const CheckpointDir& dir, int64_t generation, bool root) const = 0;
  virtual void Load(const CheckpointDir& dir, int64_t generation) = 0;
  // Suffixes the names of the checkpoint's tensor sets (a streamed fragment's filter: "-f<p>").
  void SetTag(std::string tag) { tag_ = std::move(tag); }

 protected:
  std::string Named(const char* name) const { return name + tag_; }

 private:
  std::string tag_;
};

// Plain averaging.
class IdentityFilter final : public CombineFilter {
 public:
  void Reset(ConstMatrixView) override {}
  const Matrix* EpochStart() override { return nullptr; }
  const Matrix* Apply(ConstMatrixView, bool) override { return nullptr; }
  void Save(const CheckpointDir&, int64_t, bool) const override {}
  void Load(const CheckpointDir&, int64_t) override {}
};

// Blockwise model-update filtering. W_g is computed in the form W̄ + (ζ-1)G [+ ηΔ(t-1) if
// classical], so η = 0, ζ = 1 gives W̄ bit for bit: plain averaging is this filter's special
// case. Checkpointed as the tensor set "bmuf" = {S, Δ}.
class BmufFilter final : public CombineFilter {
 public:
  // `model_is_start`: the model an epoch ends on (evaluated, saved) is the next block's start S
  // (DiLoCo's outer parameters θ, parallel.outer.type nesterov), not W_g (BMUF's). The same
  // steps either way: only what an epoch's end evaluates differs, by ηΔ.
  BmufFilter(Backend& backend, float block_momentum, float block_lr, bool nesterov,
             int64_t num_params, bool model_is_start = false);

  void Reset(ConstMatrixView model) override;
  const Matrix* EpochStart() override;
  const Matrix* Apply(ConstMatrixView mean, bool epoch_end) override;
  Matrix* Model() override { return &start_; }  // W_g (BMUF) or S (DiLoCo's θ)
  void Save(const CheckpointDir& dir, int64_t generation, bool root) const override;
  void Load(const CheckpointDir& dir, int64_t generation) override;

 private:
  // The look-ahead: start_ += ηΔ.
  void LookAhead();

  Backend& backend_;  // not owned
  float eta_;         // η, block momentum
  float zeta_;        // ζ, block learning rate
  bool nesterov_;
  bool model_is_start_;
  // [1 x P] each: the block's start point S (W_g, plus ηΔ after a look-ahead); Δ; G (scratch)
  Matrix start_, delta_, scratch_;
};

// Adam on the outer gradient: θ is the global model and every block's start; g = θ - W̄;
// θ = Adam(θ, g) with the step's scalars as the inner Adam's (engine/optim/adam.h), no weight
// decay. Checkpointed as the tensor set "outer-adam" = {θ, m, v, [t]}.
class AdamOuterFilter final : public CombineFilter {
 public:
  AdamOuterFilter(Backend& backend, double lr, double beta1, double beta2, double epsilon,
                  int64_t num_params);

  void Reset(ConstMatrixView model) override;
  const Matrix* EpochStart() override { return nullptr; }  // the epoch ended on θ
  const Matrix* Apply(ConstMatrixView mean, bool epoch_end) override;
  Matrix* Model() override { return &theta_; }
  void Save(const CheckpointDir& dir, int64_t generation, bool root) const override;
  void Load(const CheckpointDir& dir, int64_t generation) override;

 private:
  Backend& backend_;  // not owned
  double lr_;
  AdamOptions options_;          // beta1, beta2, epsilon (no weight decay)
  Matrix theta_, m_, v_, grad_;  // [1 x P]
  mutable Matrix steps_;         // [1 x 1] t_ staged for a checkpoint (a float: exact to 2^24)
  int64_t t_ = 0;
};

}  // namespace mavg
