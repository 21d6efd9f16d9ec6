#pragma once

#include "engine/nn/layer.h"

namespace mavg {

// out = in * W^T + b, with W [output x input] (Kaldi's `linearity`) and b [1 x output].
// Parameters are views into the network's flat buffer: W first, then b.
class AffineLayer final : public Layer {
 public:
  AffineLayer(int input_dim, int output_dim) : Layer(input_dim, output_dim) {}

  LayerKind Kind() const override { return LayerKind::kAffine; }
  int64_t NumParams() const override {
    return static_cast<int64_t>(OutputDim()) * (InputDim() + 1);
  }
  // Points the layer at its NumParams() floats of the network's parameter buffer.
  void Bind(float* params) { params_ = params; }

  MatrixView Weights() const { return MatrixView(params_, OutputDim(), InputDim()); }
  MatrixView Bias() const {
    return MatrixView(params_ + static_cast<int64_t>(OutputDim()) * InputDim(), 1, OutputDim());
  }
  // Learning-rate multiplier for the bias (Kaldi nnet1's <BiasLearnRateCoef>; 0.1 on the
  // output layer of a network from make_nnet_proto.py).
  float BiasLearnRateCoef() const { return bias_lr_coef_; }
  void SetBiasLearnRateCoef(float coef) { bias_lr_coef_ = coef; }

  void Forward(Backend& backend, ConstMatrixView in, MatrixView out) const override;
  void Backward(Backend& backend, ConstMatrixView in, ConstMatrixView out, ConstMatrixView out_grad,
                MatrixView in_grad) const override;

  // Gradient of the summed loss w.r.t. the parameters, accumulated:
  //   dw = beta * dw + alpha * out_grad^T * in,   db = beta * db + alpha * colsum(out_grad).
  // With dw = Weights(), alpha = -lr and beta = 1 this is an in-place SGD step.
  void ParamGradient(Backend& backend, ConstMatrixView in, ConstMatrixView out_grad, float alpha,
                     float beta, MatrixView dw, MatrixView db) const;

 private:
  float* params_ = nullptr;  // [NumParams()], not owned (network's flat buffer)
  float bias_lr_coef_ = 1.0f;
};

}  // namespace mavg
