#pragma once

#include <vector>

#include "engine/backend/device_buffer.h"
#include "engine/optim/optimizer.h"

namespace mavg {

struct SgdOptions {
  float momentum = 0.0f;  // in [0, 1)
  float l2 = 0.0f;        // weight decay per frame (Kaldi's l2-penalty); weights only
  // NG-SGD's max-change on plain SGD's updates (0: none; needs momentum 0): a layer's step is
  // scaled by min(1, max_change_per_sample x N / (c sum_i |x_i| |g_i|)) over the minibatch's N
  // frames (|x_i| with the bias input 1), the bound on |dW|_F that NG-SGD limits, c = 1
  // (max_change_with_lr false, the fork's measure) or lr (nnet2's).
  double max_change_per_sample = 0.0;
  bool max_change_with_lr = false;
};

// Kaldi nnet1 AffineTransform::Update:
//   C_W = m C_W + G^T X ;  c_b = m c_b + colsum(G)
//   W  = (1 - lr l2 N) W - lr C_W ;  b = b - lr bias_coef c_b
// Without momentum the step is one GEMM straight into W (beta = 1 - lr l2 N). With a max-change
// the step's lr is first scaled down as NG-SGD's is (see SgdOptions), from the rows' norms read
// back to the host (a synchronisation per layer update on a GPU).
class SgdOptimizer final : public Optimizer {
 public:
  SgdOptimizer(Backend& backend, const SgdOptions& options)
      : backend_(&backend), options_(options) {}

  void UpdateAffine(int affine_index, AffineLayer& layer, ConstMatrixView in, MatrixView out_grad,
                    float lr) override;
  void Reset() override;
  void ClearState() override;
  void Prepare(const Network& net) override;
  std::vector<MatrixView> State() override;
  UpdateStats TakeUpdateStats() override;

 private:
  Backend* backend_;  // [not null], not owned
  SgdOptions options_;
  std::vector<Matrix> corr_w_;     // [affine layer] momentum of W, allocated on first use
  std::vector<Matrix> corr_b_;     // [affine layer] momentum of b
  Matrix norms_in_, norms_out_;    // [1 x minibatch] squared row norms (max-change only)
  std::vector<float> host_norms_;  // [2 x minibatch] the same, read back (reused)
  UpdateStats stats_;              // layer updates and how many the max-change limited
  // The factor the max-change scales this update's lr by (1: not limited).
  double MaxChangeScale(ConstMatrixView in, ConstMatrixView out_grad, float lr);
};

}  // namespace mavg
