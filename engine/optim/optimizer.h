#pragma once
// Optimizers update one affine layer at a time from its input activations X [N x in] and the
// derivatives G [N x out] of the *summed* minibatch loss w.r.t. its outputs (Kaldi's convention:
// gradients are summed over the frames of a minibatch, not averaged, so a learning rate means
// what it means in Kaldi nnet1 recipes, e.g. 0.008 for minibatch 256, 0.32 for 1024 x 2048).
// Optimizer state (momentum, preconditioners) belongs to one worker: a combine keeps, averages
// or clears it as parallel.optimizer_state says (engine/train/averager.h).

#include <cstdint>
#include <vector>

#include "engine/nn/network.h"

namespace mavg {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Applies one step with learning rate `lr` to `layer` (the affine layer number affine_index).
  // `out_grad` is the optimizer's to overwrite (nothing reads it afterwards): NG-SGD
  // preconditions it in place.
  virtual void UpdateAffine(int affine_index, AffineLayer& layer, ConstMatrixView in,
                            MatrixView out_grad, float lr) = 0;
  // Bracket the UpdateAffine calls of one backward pass. Between them an optimizer may defer
  // the layers' updates until FinishStep (NG-SGD on a GPU runs all layers' small steps
  // together), so every `in` and `out_grad` must keep its contents until FinishStep returns;
  // the parameters are updated (in the backend's queue) when it has. Outside a bracket
  // UpdateAffine updates at once.
  virtual void BeginStep() {}
  virtual void FinishStep() {}
  // At an epoch's start: forgets the state that does not carry over from one epoch to the
  // next (all of it unless KeepsStateAcrossEpochs).
  virtual void Reset() = 0;
  // Forgets all state, whatever carries over (parallel.optimizer_state reset, at a combine):
  // the next step is a fresh optimizer's first.
  virtual void ClearState() = 0;
  // Allocates the state of every affine layer of `net`, so State() is complete from the start.
  virtual void Prepare(const Network& /*net*/) {}
  // The state tensors in a fixed order (for checkpoints and optional averaging); may be empty.
  virtual std::vector<MatrixView> State() { return {}; }
  // Called after the tensors of State() were overwritten from a checkpoint.
  virtual void StateLoaded() {}
  // Whether State() carries over from one epoch to the next (Reset keeps it): the trainer then
  // restores the last accepted epoch's state when the schedule rejects an epoch.
  virtual bool KeepsStateAcrossEpochs() const { return false; }

  // Layer updates since the last call, how many of them max-change scaled down, and the
  // histogram of their max-change scale factors (backend/scale_histogram.h: kScaleBins counts;
  // empty for an optimizer without max-change).
  struct UpdateStats {
    int64_t updates = 0, limited = 0;
    std::vector<double> scales;
  };
  virtual UpdateStats TakeUpdateStats() { return {}; }
};

}  // namespace mavg
