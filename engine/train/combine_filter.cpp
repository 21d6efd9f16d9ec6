#include "engine/train/combine_filter.h"

#include <cmath>

#include "engine/core/error.h"

namespace mavg {

BmufFilter::BmufFilter(Backend& backend, float block_momentum, float block_lr, bool nesterov,
                       int64_t num_params, bool model_is_start)
    : backend_(backend),
      eta_(block_momentum),
      zeta_(block_lr),
      nesterov_(nesterov),
      model_is_start_(model_is_start && nesterov),
      start_(backend, 1, num_params),
      delta_(backend, 1, num_params),
      scratch_(backend, 1, num_params) {}

void BmufFilter::Reset(ConstMatrixView model) {
  backend_.Copy(model, start_);
  backend_.Fill(delta_, 0.0f);
}

const Matrix* BmufFilter::EpochStart() {
  // The epoch ended on W_g itself; with Nesterov its first block starts at W_g + ηΔ (where an
  // epoch that ends on S already is).
  if (!nesterov_ || model_is_start_) return nullptr;
  LookAhead();
  return &start_;
}

const Matrix* BmufFilter::Apply(ConstMatrixView mean, bool epoch_end) {
  // start_ holds the block's start point S: W_g(t-1), plus ηΔ(t-1) with Nesterov. The block
  // "gradient" is the workers' progress from there, G = W̄ - S, and
  //   Δ(t) = ηΔ(t-1) + ζG,  W_g(t) = W_g(t-1) + Δ(t) = W̄ + (ζ-1)G [+ ηΔ(t-1) if classical],
  // the second form exactly W̄ when η = 0, ζ = 1 (plain averaging, bit for bit).
  backend_.Copy(mean, scratch_);
  backend_.Axpby(-1.0f, start_, 1.0f, scratch_);  // G
  backend_.Copy(delta_, start_);
  backend_.Axpby(zeta_ - 1.0f, scratch_, nesterov_ ? 0.0f : eta_, start_);
  backend_.Axpby(zeta_, scratch_, eta_, delta_);  // Δ(t)
  backend_.Axpby(1.0f, mean, 1.0f, start_);       // W_g(t)
  // Nesterov: the next block starts at the look-ahead W_g + ηΔ, where its G is measured from;
  // an epoch ends on the model W_g itself (BMUF), or on S (DiLoCo's θ).
  if (nesterov_ && (!epoch_end || model_is_start_)) LookAhead();
  return &start_;
}

void BmufFilter::LookAhead() { backend_.Axpby(eta_, delta_, 1.0f, start_); }

void BmufFilter::Save(const CheckpointDir& dir, int64_t generation, bool root) const {
  if (root) dir.WriteTensors(backend_, generation, Named("bmuf"), {start_, delta_});
}

void BmufFilter::Load(const CheckpointDir& dir, int64_t generation) {
  dir.ReadTensors(backend_, generation, Named("bmuf"), {start_, delta_});
}

AdamOuterFilter::AdamOuterFilter(Backend& backend, double lr, double beta1, double beta2,
                                 double epsilon, int64_t num_params)
    : backend_(backend),
      lr_(lr),
      options_{.beta1 = beta1, .beta2 = beta2, .epsilon = epsilon},
      theta_(backend, 1, num_params),
      m_(backend, 1, num_params),
      v_(backend, 1, num_params),
      grad_(backend, 1, num_params),
      steps_(backend, 1, 1) {}

void AdamOuterFilter::Reset(ConstMatrixView model) {
  backend_.Copy(model, theta_);
  backend_.Fill(m_, 0.0f);
  backend_.Fill(v_, 0.0f);
  t_ = 0;
}

const Matrix* AdamOuterFilter::Apply(ConstMatrixView mean, bool /*epoch_end*/) {
  backend_.Copy(theta_, grad_);
  backend_.Axpby(-1.0f, mean, 1.0f, grad_);  // g = θ - W̄
  backend_.AdamUpdate(AdamOptimizer::Scalars(options_, ++t_, lr_), grad_, m_, v_, theta_);
  return &theta_;
}

void AdamOuterFilter::Save(const CheckpointDir& dir, int64_t generation, bool root) const {
  if (!root) return;
  MAVG_CHECK(t_ < (int64_t{1} << 24), "outer Adam: {} steps exceed a float's exact range", t_);
  const float t = static_cast<float>(t_);
  backend_.CopyFromHost(&t, steps_);
  dir.WriteTensors(backend_, generation, Named("outer-adam"), {theta_, m_, v_, steps_});
}

void AdamOuterFilter::Load(const CheckpointDir& dir, int64_t generation) {
  dir.ReadTensors(backend_, generation, Named("outer-adam"), {theta_, m_, v_, steps_});
  float t = 0.0f;
  backend_.CopyToHost(steps_, &t);
  MAVG_CHECK(t >= 0.0f && t == std::floor(t), "outer Adam: a step count of {} in the checkpoint",
             t);
  t_ = static_cast<int64_t>(t);
}

}  // namespace mavg
