#pragma once
// Natural-gradient SGD as Kaldi nnet2's AffineComponentPreconditionedOnline
// (docs/algorithms.md §2a, §2d): for a minibatch with inputs X (N x Din) and output derivatives
// G (N x Dout) of the summed loss, both sides are preconditioned by online low-rank Fisher models,
//   Xa = [X 1];  (Pin, g_in) = precond_in(Xa);  (Pout, g_out) = precond_out(G)
// and, with s = g_in g_out and the max-change scale ms,
//   W -= lr s ms Pout^T Pin[:, :Din],   b -= lr s ms bias_coef Pout^T Pin[:, Din].
// Max-change (nnet2 GetScalingFactor): tot = lr s sum_i sqrt(|pin_i|^2 |pout_i|^2) bounds
// ||dW||_F; when it exceeds max_change_per_sample * N the step is scaled down to that. The
// authors' fork of Kaldi measures tot without lr (MaxChangeMode::kFork): the limit binds on
// s sum_i |pin_i| |pout_i| <= max_change_per_sample * N, so ||dW||_F <= lr x that still
// grows with lr, where under nnet2's rule a binding limit cancels a larger lr.
// gamma, the max-change scale and the step are computed on the Backend (backend/ngsgd_small.h):
// an update queues device work only. On a backend that runs asynchronously (a GPU) the layers'
// updates wait for the end of the backward pass (BeginStep ... FinishStep), and the small steps
// of all layers
// run together, one launch per phase (Backend::RunNgsgdSmallBatch): each layer's maths and
// order of operations are those of an update at once, which the CPU keeps.
// The preconditioners belong to the worker and are never averaged; they restart every epoch by
// default (reset_each_epoch, as the paper's setup, where every epoch was a new process), and
// at every combine with parallel.optimizer_state reset.
// Momentum and L2 are not used by this update (as in Kaldi's NG components).

#include <memory>
#include <utility>
#include <vector>

#include "engine/config/choices.h"
#include "engine/optim/online_preconditioner.h"
#include "engine/optim/optimizer.h"

namespace mavg {

// When the layers' updates wait for FinishStep: where the backend runs asynchronously (kAuto),
// or always, or never (tests compare the two).
enum class NgsgdBatching { kAuto, kAlways, kNever };

struct NgsgdOptions {
  PreconditionerOptions in{20, 4, 2000, 4.0, 1e-10, 5e-4};   // rank_in = 20
  PreconditionerOptions out{80, 4, 2000, 4.0, 1e-10, 5e-4};  // rank_out = 80
  double max_change_per_sample = 0.075;                      // 0: no limit
  MaxChangeMode max_change_mode = MaxChangeMode::kNnet2;
  bool reset_each_epoch = true;
  NgsgdBatching batching = NgsgdBatching::kAuto;
};

class NgsgdOptimizer final : public Optimizer {
 public:
  NgsgdOptimizer(Backend& backend, const NgsgdOptions& options);

  void UpdateAffine(int affine_index, AffineLayer& layer, ConstMatrixView in, MatrixView out_grad,
                    float lr) override;
  void BeginStep() override;
  void FinishStep() override;
  void Reset() override;
  void ClearState() override;
  void Prepare(const Network& net) override;
  std::vector<MatrixView> State() override;
  void StateLoaded() override;
  bool KeepsStateAcrossEpochs() const override { return !options_.reset_each_epoch; }

  // Reads the device's count of max-change scalings (synchronizes: once per minibatch, after it).
  UpdateStats TakeUpdateStats() override;
  // The preconditioners of affine layer k (tests).
  OnlinePreconditioner& In(int k) {
    FlushPending();
    return *in_[k];
  }
  OnlinePreconditioner& Out(int k) {
    FlushPending();
    return *out_[k];
  }

 private:
  // A layer's update, as UpdateAffine gave it (views of the network's buffers, which keep their
  // contents until its next forward pass).
  struct LayerUpdate {
    int k = 0;                 // affine layer
    MatrixView weights, bias;  // the layer's parameters
    float bias_coef = 1.0f;
    ConstMatrixView in;   // [N x in]
    MatrixView out_grad;  // [N x out], preconditioned in place
    float lr = 0.0f;
  };
  // The workspace of a layer's update: [X 1], the row products of both sides, and gamma_in,
  // gamma_out, -lr s ms (on the device).
  struct LayerWork {
    Matrix xa, prod_in, prod_out;
    DeviceBuffer<float> gammas;  // [3]
  };

  void Ensure(int k, const AffineLayer& layer);
  // work_[slot], large enough for n rows of din inputs.
  LayerWork& Work(size_t slot, int64_t n, int64_t din);
  void UpdateNow(const LayerUpdate& u);
  // The deferred updates, every layer's small steps of a phase as one batch.
  void FlushPending();
  // xa = [X 1] of the update.
  MatrixView Xa(const LayerUpdate& u, LayerWork& w);
  NgsgdSmallTask StepTask(const LayerUpdate& u, LayerWork& w);
  // W -= lr s ms Pout^T Pin[:, :Din], b likewise, once the step task has run.
  void Apply(const LayerUpdate& u, LayerWork& w);

  Backend* backend_;  // [not null], not owned
  NgsgdOptions options_;
  bool defer_ = false;    // layer updates wait for FinishStep inside a step's bracket
  bool in_step_ = false;  // between BeginStep and FinishStep
  std::vector<std::unique_ptr<OnlinePreconditioner>> in_, out_;  // [affine layer]
  std::vector<LayerWork> work_;       // [1] updating at once; [affine layer] deferred
  std::vector<LayerUpdate> pending_;  // deferred, in the order UpdateAffine gave them
  DeviceBuffer<double> limited_;      // [affine layers]: max-change scalings since TakeUpdateStats
  DeviceBuffer<double> scales_;       // [affine layers x kScaleBins]: scale factors, ever
  std::vector<double> scales_taken_;  // [affine layers x kScaleBins]: scales_ at the last take
  UpdateStats stats_;                 // updates (host); limited is read from limited_
};

}  // namespace mavg
