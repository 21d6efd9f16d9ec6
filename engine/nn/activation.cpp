#include "engine/nn/activation.h"

#include "engine/core/error.h"

namespace mavg {

LayerKind ParseLayerKind(const std::string& name) {
  if (const std::optional<LayerKind> kind = ParseEnum<LayerKind>(name)) return *kind;
  MAVG_FAIL("unknown layer type '{}' (valid: {})", name, EnumNames<LayerKind>());
}

LayerKind HiddenLayerKind(Activation activation) {
  switch (activation) {
    case Activation::kSigmoid:
      return LayerKind::kSigmoid;
    case Activation::kTanh:
      return LayerKind::kTanh;
    case Activation::kRelu:
      return LayerKind::kRelu;
  }
  MAVG_FAIL("model.activation: unknown activation {}", static_cast<int>(activation));
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
