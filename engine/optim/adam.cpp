#include "engine/optim/adam.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"

namespace mavg {

AdamScalars AdamOptimizer::Scalars(const AdamOptions& o, int64_t t, double lr) {
  AdamScalars s;
  s.beta1 = static_cast<float>(o.beta1);
  s.one_minus_beta1 = static_cast<float>(1.0 - o.beta1);
  s.beta2 = static_cast<float>(o.beta2);
  s.one_minus_beta2 = static_cast<float>(1.0 - o.beta2);
  const double bc1 = 1.0 - std::pow(o.beta1, static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(o.beta2, static_cast<double>(t));
  s.step_size = static_cast<float>(lr / bc1);
  s.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  s.epsilon = static_cast<float>(o.epsilon);
  s.decay = static_cast<float>(1.0 - lr * o.weight_decay);
  return s;
}

void AdamOptimizer::Allocate(int k, const AffineLayer& layer) {
  if (static_cast<int>(layers_.size()) <= k) {
    layers_.resize(k + 1);
    steps_.resize(k + 1, 0);
  }
  LayerState& l = layers_[k];
  if (l.m_w.Rows() != 0) return;
  const int64_t out = layer.OutputDim(), in = layer.InputDim();
  for (Matrix* m : {&l.m_w, &l.v_w, &l.g_w}) *m = Matrix(*backend_, out, in);
  for (Matrix* m : {&l.m_b, &l.v_b, &l.g_b}) *m = Matrix(*backend_, 1, out);
  for (Matrix* m : {&l.m_w, &l.v_w, &l.m_b, &l.v_b}) backend_->Fill(*m, 0.0f);
}

void AdamOptimizer::Prepare(const Network& net) {
  layers_.clear();
  steps_.clear();
  for (int k = 0; k < net.NumAffine(); ++k) Allocate(k, net.Affine(k));
  steps_tensor_ = Matrix(*backend_, 1, std::max(1, net.NumAffine()));
  backend_->Fill(steps_tensor_, 0.0f);
}

void AdamOptimizer::Reset() {
  if (options_.reset_each_epoch) ClearState();
}

void AdamOptimizer::ClearState() {
  for (LayerState& l : layers_) {
    for (Matrix* m : {&l.m_w, &l.v_w, &l.m_b, &l.v_b}) backend_->Fill(*m, 0.0f);
  }
  for (int64_t& t : steps_) t = 0;
}

std::vector<MatrixView> AdamOptimizer::State() {
  std::vector<MatrixView> out;
  for (LayerState& l : layers_) {
    out.insert(out.end(), {l.m_w.View(), l.v_w.View(), l.m_b.View(), l.v_b.View()});
  }
  if (steps_tensor_.Cols() > 0 && !steps_.empty()) {
    host_steps_.assign(static_cast<size_t>(steps_tensor_.Cols()), 0.0f);
    for (size_t k = 0; k < steps_.size(); ++k) {
      MAVG_CHECK(steps_[k] < (int64_t{1} << 24), "Adam: {} steps exceed a float's exact range",
                 steps_[k]);
      host_steps_[k] = static_cast<float>(steps_[k]);
    }
    backend_->CopyFromHost(host_steps_.data(), steps_tensor_);
    out.push_back(steps_tensor_);
  }
  return out;
}

void AdamOptimizer::StateLoaded() {
  if (steps_.empty()) return;
  host_steps_.assign(static_cast<size_t>(steps_tensor_.Cols()), 0.0f);
  backend_->CopyToHost(steps_tensor_, host_steps_.data());
  for (size_t k = 0; k < steps_.size(); ++k) {
    const float t = host_steps_[k];
    MAVG_CHECK(t >= 0.0f && t == std::floor(t), "Adam: a step count of {} in the state", t);
    steps_[k] = static_cast<int64_t>(t);
  }
}

void AdamOptimizer::UpdateAffine(int k, AffineLayer& layer, ConstMatrixView in, MatrixView out_grad,
                                 float lr) {
  Allocate(k, layer);
  LayerState& l = layers_[k];
  const float per_frame = 1.0f / static_cast<float>(in.rows);
  layer.ParamGradient(*backend_, in, out_grad, per_frame, 0.0f, l.g_w, l.g_b);
  const int64_t t = ++steps_[k];
  backend_->AdamUpdate(Scalars(options_, t, lr), l.g_w, l.m_w, l.v_w, layer.Weights());
  backend_->AdamUpdate(Scalars(options_, t, static_cast<double>(lr) * layer.BiasLearnRateCoef()),
                       l.g_b, l.m_b, l.v_b, layer.Bias());
}

}  // namespace mavg
