#pragma once

#include "engine/nn/layer.h"

namespace mavg {

// Element-wise non-linearities (sigmoid, tanh, relu) and the row-wise softmax output layer.
// Softmax has no Backward of its own: training uses the fused softmax + cross-entropy loss
// (Backend::SoftmaxCrossEntropy), which is both cheaper and numerically stable.
class ActivationLayer final : public Layer {
 public:
  ActivationLayer(LayerKind kind, int dim);

  LayerKind Kind() const override { return kind_; }
  void Forward(Backend& backend, ConstMatrixView in, MatrixView out) const override;
  void Backward(Backend& backend, ConstMatrixView in, ConstMatrixView out, ConstMatrixView out_grad,
                MatrixView in_grad) const override;

 private:
  LayerKind kind_;
};

}  // namespace mavg
