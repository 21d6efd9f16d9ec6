#pragma once
// Layers of a feed-forward network. A layer computes on the Backend only; parameters of
// updatable layers live in the owning Network's single flat buffer (so averaging and
// checkpointing see one contiguous array).

#include <cstdint>
#include <string>

#include "engine/backend/backend.h"
#include "engine/config/choices.h"
#include "engine/core/enum_text.h"

namespace mavg {

enum class LayerKind { kAffine, kSigmoid, kTanh, kRelu, kSoftmax };
// The names model files hold.
inline constexpr EnumText<LayerKind> kLayerKindTexts[] = {{LayerKind::kAffine, "affine"},
                                                          {LayerKind::kSigmoid, "sigmoid"},
                                                          {LayerKind::kTanh, "tanh"},
                                                          {LayerKind::kRelu, "relu"},
                                                          {LayerKind::kSoftmax, "softmax"}};
MAVG_ENUM_TEXTS(LayerKind, kLayerKindTexts)

inline const char* LayerKindName(LayerKind kind) { return ToString(kind).data(); }
// Parses "affine", "sigmoid", ...; throws listing the valid names.
LayerKind ParseLayerKind(const std::string& name);
// The hidden layers' kind for model.activation.
LayerKind HiddenLayerKind(Activation activation);

class Layer {
 public:
  Layer(int input_dim, int output_dim) : input_dim_(input_dim), output_dim_(output_dim) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  virtual LayerKind Kind() const = 0;
  int InputDim() const { return input_dim_; }
  int OutputDim() const { return output_dim_; }
  // Number of floats this layer keeps in the network's flat parameter buffer.
  virtual int64_t NumParams() const { return 0; }

  // out [N x OutputDim] = f(in [N x InputDim]).
  virtual void Forward(Backend& backend, ConstMatrixView in, MatrixView out) const = 0;
  // in_grad = d loss / d in, given out_grad = d loss / d out (in and out as in Forward).
  // For element-wise layers in_grad may alias out_grad.
  virtual void Backward(Backend& backend, ConstMatrixView in, ConstMatrixView out,
                        ConstMatrixView out_grad, MatrixView in_grad) const = 0;

 private:
  int input_dim_;
  int output_dim_;
};

}  // namespace mavg
