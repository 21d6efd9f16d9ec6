#pragma once
// A feed-forward network: [affine, activation] x hidden layers, then affine + softmax.
// All parameters live in one flat [1 x NumParams()] device buffer, layer by layer (weights then
// bias), so averaging is one all-reduce over one array and a checkpoint is one write.

#include <functional>
#include <memory>
#include <vector>

#include "engine/backend/device_buffer.h"
#include "engine/nn/affine.h"

namespace mavg {

struct NetworkSpec {
  int input_dim = 0;
  int output_dim = 0;
  std::vector<int> hidden_dims;  // one entry per hidden layer
  LayerKind activation = LayerKind::kSigmoid;

  bool operator==(const NetworkSpec&) const = default;
};

// Called for each affine layer during Backward, output layer first, after the layer's input
// gradient has been computed with the weights of the forward pass (so an update in place is
// safe). `in` is the layer's input activations, `out_grad` d loss / d layer output, which the
// visitor may overwrite: Backward does not read it again.
using AffineVisitor = std::function<void(int affine_index, AffineLayer& layer, ConstMatrixView in,
                                         MatrixView out_grad)>;

class Network {
 public:
  // Allocates the layers and a zero parameter buffer on `backend`'s device.
  Network(Backend& backend, const NetworkSpec& spec);
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const NetworkSpec& Spec() const { return spec_; }
  Backend& GetBackend() const { return *backend_; }
  int NumLayers() const { return static_cast<int>(layers_.size()); }
  const Layer& GetLayer(int i) const { return *layers_[i]; }
  int NumAffine() const { return static_cast<int>(affine_.size()); }
  AffineLayer& Affine(int k) { return *affine_[k]; }
  const AffineLayer& Affine(int k) const { return *affine_[k]; }

  int64_t NumParams() const { return params_.Cols(); }
  // The parameters the layers use now: the network's own buffer, or the storage of the
  // innermost live ParamsBinding.
  MatrixView Params() { return MatrixView(bound_, 1, NumParams()); }
  ConstMatrixView Params() const { return ConstMatrixView(bound_, 1, NumParams()); }
  // Copies parameters (and bias learning-rate coefficients) from a network of the same spec.
  void CopyParamsFrom(const Network& other);

  // Forward pass through every layer but the final softmax; returns the logits [N x out].
  ConstMatrixView ForwardLogits(ConstMatrixView input);
  // Full forward pass; returns the posteriors [N x out].
  ConstMatrixView ForwardPosteriors(ConstMatrixView input);
  // Buffer [N x out] for d loss / d logits of the last ForwardLogits (it holds the logits until
  // the loss overwrites it: Backend::SoftmaxCrossEntropy may write the gradient in place).
  MatrixView LogitsBuffer();

  // Back-propagates LogitsBuffer() (holding d loss / d logits) through the network, calling
  // `visit` for every affine layer. With need_input_grad, InputGrad() holds d loss / d input.
  void Backward(const AffineVisitor& visit, bool need_input_grad = false);
  ConstMatrixView InputGrad() const;

 private:
  friend class ParamsBinding;
  // Points the layers at `storage` (the network's own buffer when null).
  void Bind(float* storage);
  void EnsureWorkspace(int64_t rows);
  MatrixView Act(int layer) { return acts_[layer].View().RowRange(0, rows_); }
  MatrixView Grad(int layer) { return grads_[layer].View().RowRange(0, rows_); }

  Backend* backend_;  // [not null], not owned
  NetworkSpec spec_;
  std::vector<std::unique_ptr<Layer>> layers_;  // [NumLayers()], last is softmax
  std::vector<AffineLayer*> affine_;            // [NumAffine()], owned by layers_
  Matrix params_;                               // [1 x NumParams()], own buffer
  float* bound_ = nullptr;     // parameters in use (own buffer or a ParamsBinding's), not owned
  std::vector<Matrix> acts_;   // [NumLayers()] outputs, [capacity_ x dim]
  std::vector<Matrix> grads_;  // [NumLayers() - 1] d loss / d output
  Matrix input_grad_;          // [capacity_ x input_dim] when requested
  ConstMatrixView input_;      // input of the last forward pass
  int64_t capacity_ = 0;       // rows the workspace holds
  int64_t rows_ = 0;           // rows of the last forward pass
};

// For its lifetime, `net`'s layers use `storage` ([1 x NumParams()], same device; e.g. one
// worker's parameters) instead of what they used before, which they use again afterwards.
// The only way to make a network work on other parameters, so which ones it sees is always
// the innermost binding in scope.
class ParamsBinding {
 public:
  ParamsBinding(Network& net, MatrixView storage);
  ~ParamsBinding() { net_.Bind(previous_); }
  ParamsBinding(const ParamsBinding&) = delete;
  ParamsBinding& operator=(const ParamsBinding&) = delete;

 private:
  Network& net_;     // not owned
  float* previous_;  // what the layers used before, not owned
};

}  // namespace mavg
