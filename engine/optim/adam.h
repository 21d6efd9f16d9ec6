#pragma once
// Adam (Kingma & Ba 2015) with decoupled weight decay (AdamW, Loshchilov & Hutter 2019), the
// inner optimizer of DiLoCo (Douillard et al. 2023), computed as PyTorch's torch.optim.AdamW
// (single-tensor form) computes it. Unlike SGD and NG-SGD here, the gradient is the mean over the
// minibatch's frames (PyTorch's convention: an Adam learning rate means what it means there,
// e.g. 1e-3), not Kaldi's summed gradient; Adam's step hardly depends on the gradient's scale
// anyway, only through epsilon. Weight decay applies to weights and biases alike (PyTorch's
// default); the bias's learning rate is scaled by the layer's bias coefficient, as SGD's is.
//
// State per affine layer: the moments m and v of W and of b, and the layer's step count t (bias
// correction), checkpointed with the rest (State()). Kept across epochs unless reset_each_epoch.

#include <cstdint>
#include <vector>

#include "engine/backend/device_buffer.h"
#include "engine/optim/optimizer.h"

namespace mavg {

struct AdamOptions {
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weight_decay = 0.0;  // decoupled: p *= 1 - lr weight_decay per step (AdamW)
  bool reset_each_epoch = false;
};

class AdamOptimizer final : public Optimizer {
 public:
  AdamOptimizer(Backend& backend, const AdamOptions& options)
      : backend_(&backend), options_(options) {}

  void UpdateAffine(int affine_index, AffineLayer& layer, ConstMatrixView in, MatrixView out_grad,
                    float lr) override;
  void Reset() override;
  void ClearState() override;
  void Prepare(const Network& net) override;
  // Per layer m_W, v_W, m_b, v_b; then the step counts [1 x layers] (exact up to 2^24 steps).
  std::vector<MatrixView> State() override;
  void StateLoaded() override;
  bool KeepsStateAcrossEpochs() const override { return !options_.reset_each_epoch; }

  // The scalars of step t (1-based) at learning rate lr (exposed for tests).
  static AdamScalars Scalars(const AdamOptions& o, int64_t t, double lr);

 private:
  struct LayerState {
    Matrix m_w, v_w, m_b, v_b;  // the moments
    Matrix g_w, g_b;            // the mean gradient (scratch)
  };
  void Allocate(int affine_index, const AffineLayer& layer);

  Backend* backend_;  // [not null], not owned
  AdamOptions options_;
  std::vector<LayerState> layers_;  // [affine layer]
  std::vector<int64_t> steps_;      // [affine layer] t, the steps taken
  Matrix steps_tensor_;             // [1 x layers] steps_ as floats, for State()
  std::vector<float> host_steps_;   // (reused)
};

}  // namespace mavg
