#include "engine/nn/network.h"

#include "engine/nn/activation.h"

namespace mavg {

Network::Network(Backend& backend, const NetworkSpec& spec) : backend_(&backend), spec_(spec) {
  MAVG_CHECK(spec.input_dim > 0 && spec.output_dim > 0, "network dims must be positive ({} -> {})",
             spec.input_dim, spec.output_dim);
  MAVG_CHECK(spec.activation == LayerKind::kSigmoid || spec.activation == LayerKind::kTanh ||
                 spec.activation == LayerKind::kRelu,
             "hidden activation must be sigmoid, tanh or relu");
  int dim = spec.input_dim;
  // BLAS libraries index each weight matrix with 32-bit dimensions and sizes.
  auto check_layer = [](int64_t in, int64_t out) {
    MAVG_CHECK(in * out <= INT32_MAX,
               "an affine layer of {} inputs x {} outputs has {} weights (at most 2^31 - 1); "
               "use a smaller model.hidden_dim or fewer outputs",
               in, out, in * out);
  };
  for (int hidden : spec.hidden_dims) {
    MAVG_CHECK(hidden > 0, "hidden layer dims must be positive");
    check_layer(dim, hidden);
    layers_.push_back(std::make_unique<AffineLayer>(dim, hidden));
    layers_.push_back(std::make_unique<ActivationLayer>(spec.activation, hidden));
    dim = hidden;
  }
  check_layer(dim, spec.output_dim);
  layers_.push_back(std::make_unique<AffineLayer>(dim, spec.output_dim));
  layers_.push_back(std::make_unique<ActivationLayer>(LayerKind::kSoftmax, spec.output_dim));

  int64_t total = 0;
  for (auto& layer : layers_) {
    total += layer->NumParams();
    if (layer->Kind() == LayerKind::kAffine) {
      affine_.push_back(static_cast<AffineLayer*>(layer.get()));
    }
  }
  params_ = Matrix(backend, 1, total);
  Bind(nullptr);
}

ParamsBinding::ParamsBinding(Network& net, MatrixView storage) : net_(net), previous_(net.bound_) {
  MAVG_CHECK(storage.rows == 1 && storage.cols == net.NumParams() && storage.data != nullptr,
             "ParamsBinding: storage is {}x{}, the network has {} parameters", storage.rows,
             storage.cols, net.NumParams());
  net.Bind(storage.data);
}

void Network::Bind(float* storage) {
  bound_ = storage != nullptr ? storage : params_.View().data;
  float* base = bound_;
  for (AffineLayer* affine : affine_) {
    affine->Bind(base);
    base += affine->NumParams();
  }
}

void Network::CopyParamsFrom(const Network& other) {
  MAVG_CHECK(other.spec_ == spec_, "cannot copy parameters between different architectures");
  backend_->Copy(other.Params(), Params());
  for (int k = 0; k < NumAffine(); ++k) {
    affine_[k]->SetBiasLearnRateCoef(other.affine_[k]->BiasLearnRateCoef());
  }
}

void Network::EnsureWorkspace(int64_t rows) {
  rows_ = rows;
  if (rows <= capacity_) return;
  capacity_ = rows;
  acts_.clear();
  grads_.clear();
  input_grad_ = Matrix();
  for (int i = 0; i < NumLayers(); ++i) {
    acts_.emplace_back(*backend_, rows, layers_[i]->OutputDim());
  }
  for (int i = 0; i + 1 < NumLayers(); ++i) {
    grads_.emplace_back(*backend_, rows, layers_[i]->OutputDim());
  }
}

ConstMatrixView Network::ForwardLogits(ConstMatrixView input) {
  MAVG_CHECK(input.cols == spec_.input_dim, "network input has {} columns, expected {}", input.cols,
             spec_.input_dim);
  EnsureWorkspace(input.rows);
  input_ = input;
  ConstMatrixView x = input;
  for (int i = 0; i + 1 < NumLayers(); ++i) {
    layers_[i]->Forward(*backend_, x, Act(i));
    x = Act(i);
  }
  return x;
}

ConstMatrixView Network::ForwardPosteriors(ConstMatrixView input) {
  ConstMatrixView logits = ForwardLogits(input);
  const int last = NumLayers() - 1;
  layers_[last]->Forward(*backend_, logits, Act(last));
  return Act(last);
}

MatrixView Network::LogitsBuffer() { return Act(NumLayers() - 2); }

void Network::Backward(const AffineVisitor& visit, bool need_input_grad) {
  // The logits buffer holds d loss / d logits; walk down from the output affine layer.
  const int top = NumLayers() - 2;
  int affine_k = NumAffine() - 1;
  MatrixView out_grad = Act(top);
  for (int i = top; i >= 0; --i) {
    const Layer& layer = *layers_[i];
    ConstMatrixView in = i > 0 ? ConstMatrixView(Act(i - 1)) : input_;
    MatrixView in_grad;
    if (i > 0) {
      in_grad = Grad(i - 1);
    } else if (need_input_grad) {
      if (input_grad_.Rows() < rows_) input_grad_ = Matrix(*backend_, capacity_, spec_.input_dim);
      in_grad = input_grad_.View().RowRange(0, rows_);
    }
    if (!in_grad.Empty()) layer.Backward(*backend_, in, Act(i), out_grad, in_grad);
    if (layer.Kind() == LayerKind::kAffine) {
      visit(affine_k, *affine_[affine_k], in, out_grad);
      --affine_k;
    }
    out_grad = in_grad;
  }
}

ConstMatrixView Network::InputGrad() const {
  return ConstMatrixView(input_grad_.View().data, rows_, spec_.input_dim);
}

}  // namespace mavg
