#include "engine/train/combine_filter.h"

namespace mavg {

BmufFilter::BmufFilter(Backend& backend, float block_momentum, float block_lr, bool nesterov,
                       int64_t num_params)
    : backend_(backend),
      eta_(block_momentum),
      zeta_(block_lr),
      nesterov_(nesterov),
      start_(backend, 1, num_params),
      delta_(backend, 1, num_params),
      scratch_(backend, 1, num_params) {}

void BmufFilter::Reset(ConstMatrixView model) {
  backend_.Copy(model, start_);
  backend_.Fill(delta_, 0.0f);
}

const Matrix* BmufFilter::EpochStart() {
  // The epoch ended on W_g itself; with Nesterov its first block starts at W_g + ηΔ.
  if (!nesterov_) return nullptr;
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
  // an epoch ends on the model W_g itself.
  if (nesterov_ && !epoch_end) LookAhead();
  return &start_;
}

void BmufFilter::LookAhead() { backend_.Axpby(eta_, delta_, 1.0f, start_); }

void BmufFilter::Save(const CheckpointDir& dir, int64_t generation, bool root) const {
  if (root) dir.WriteTensors(backend_, generation, "bmuf", {start_, delta_});
}

void BmufFilter::Load(const CheckpointDir& dir, int64_t generation) {
  dir.ReadTensors(backend_, generation, "bmuf", {start_, delta_});
}

}  // namespace mavg
