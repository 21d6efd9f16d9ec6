#pragma once

#include <vector>

#include "engine/backend/device_buffer.h"
#include "engine/optim/optimizer.h"

namespace mavg {

struct SgdOptions {
  float momentum = 0.0f;  // in [0, 1)
  float l2 = 0.0f;        // weight decay per frame (Kaldi's l2-penalty); weights only
};

// Kaldi nnet1 AffineTransform::Update:
//   C_W = m C_W + G^T X ;  c_b = m c_b + colsum(G)
//   W  = (1 - lr l2 N) W - lr C_W ;  b = b - lr bias_coef c_b
// Without momentum the step is one GEMM straight into W (beta = 1 - lr l2 N).
class SgdOptimizer final : public Optimizer {
 public:
  SgdOptimizer(Backend& backend, const SgdOptions& options)
      : backend_(&backend), options_(options) {}

  void UpdateAffine(int affine_index, AffineLayer& layer, ConstMatrixView in,
                    MatrixView out_grad, float lr) override;
  void Reset() override;
  void Prepare(const Network& net) override;
  std::vector<MatrixView> State() override;

 private:
  Backend* backend_;  // [not null], not owned
  SgdOptions options_;
  std::vector<Matrix> corr_w_;  // [affine layer] momentum of W, allocated on first use
  std::vector<Matrix> corr_b_;  // [affine layer] momentum of b
};

}  // namespace mavg
