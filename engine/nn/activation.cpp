#include "engine/nn/activation.h"

#include "engine/core/error.h"

namespace mavg {

const char* LayerKindName(LayerKind kind) {
  switch (kind) {
    case LayerKind::kAffine:
      return "affine";
    case LayerKind::kSigmoid:
      return "sigmoid";
    case LayerKind::kTanh:
      return "tanh";
    case LayerKind::kRelu:
      return "relu";
    case LayerKind::kSoftmax:
      return "softmax";
  }
  return "?";
}

LayerKind ParseLayerKind(const std::string& name) {
  for (LayerKind k : {LayerKind::kAffine, LayerKind::kSigmoid, LayerKind::kTanh, LayerKind::kRelu,
                      LayerKind::kSoftmax}) {
    if (name == LayerKindName(k)) return k;
  }
  MAVG_FAIL("unknown layer type '{}' (valid: affine, sigmoid, tanh, relu, softmax)", name);
}

ActivationLayer::ActivationLayer(LayerKind kind, int dim) : Layer(dim, dim), kind_(kind) {
  MAVG_CHECK(kind != LayerKind::kAffine, "ActivationLayer cannot be affine");
}

void ActivationLayer::Forward(Backend& backend, ConstMatrixView in, MatrixView out) const {
  switch (kind_) {
    case LayerKind::kSigmoid:
      return backend.Sigmoid(in, out);
    case LayerKind::kTanh:
      return backend.Tanh(in, out);
    case LayerKind::kRelu:
      return backend.Relu(in, out);
    case LayerKind::kSoftmax:
      return backend.Softmax(in, out);
    case LayerKind::kAffine:
      break;
  }
}

void ActivationLayer::Backward(Backend& backend, ConstMatrixView /*in*/, ConstMatrixView out,
                               ConstMatrixView out_grad, MatrixView in_grad) const {
  switch (kind_) {
    case LayerKind::kSigmoid:
      return backend.SigmoidBackward(out, out_grad, in_grad);
    case LayerKind::kTanh:
      return backend.TanhBackward(out, out_grad, in_grad);
    case LayerKind::kRelu:
      return backend.ReluBackward(out, out_grad, in_grad);
    case LayerKind::kSoftmax:
      MAVG_FAIL("softmax is trained through the fused softmax + cross-entropy loss");
    case LayerKind::kAffine:
      break;
  }
}

}  // namespace mavg
