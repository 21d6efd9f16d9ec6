#include "engine/optim/sgd.h"

#include <algorithm>
#include <cmath>

#include "engine/backend/scale_histogram.h"

namespace mavg {

void SgdOptimizer::Reset() { ClearState(); }

void SgdOptimizer::ClearState() {
  for (Matrix& m : corr_w_) backend_->Fill(m, 0.0f);
  for (Matrix& m : corr_b_) backend_->Fill(m, 0.0f);
}

void SgdOptimizer::Prepare(const Network& net) {
  if (options_.momentum == 0.0f) return;
  corr_w_.clear();
  corr_b_.clear();
  for (int k = 0; k < net.NumAffine(); ++k) {
    corr_w_.emplace_back(*backend_, net.Affine(k).OutputDim(), net.Affine(k).InputDim());
    corr_b_.emplace_back(*backend_, 1, net.Affine(k).OutputDim());
  }
}

std::vector<MatrixView> SgdOptimizer::State() {
  std::vector<MatrixView> out;
  for (size_t k = 0; k < corr_w_.size(); ++k) {
    out.push_back(corr_w_[k]);
    out.push_back(corr_b_[k]);
  }
  return out;
}

Optimizer::UpdateStats SgdOptimizer::TakeUpdateStats() {
  UpdateStats out = stats_;
  stats_ = {};
  return out;
}

double SgdOptimizer::MaxChangeScale(ConstMatrixView in, ConstMatrixView out_grad, float lr) {
  const int64_t n = in.rows;
  if (norms_in_.Cols() < n) {
    norms_in_ = Matrix(*backend_, 1, n);
    norms_out_ = Matrix(*backend_, 1, n);
  }
  MatrixView a = norms_in_.View().ColRange(0, n), b = norms_out_.View().ColRange(0, n);
  backend_->RowSumSquares(in, a);
  backend_->RowSumSquares(out_grad, b);
  host_norms_.resize(2 * static_cast<size_t>(n));
  float* ha = host_norms_.data();
  float* hb = ha + n;
  backend_->CopyToHost(a, ha);
  backend_->CopyToHost(b, hb);
  double sum = 0.0;  // sum_i |[x_i, 1]| |g_i|
  for (int64_t i = 0; i < n; ++i) {
    sum += std::sqrt((static_cast<double>(ha[i]) + 1.0) * static_cast<double>(hb[i]));
  }
  const double limit = options_.max_change_per_sample * static_cast<double>(n);
  const double total = (options_.max_change_with_lr ? lr : 1.0) * sum;
  return total > limit ? limit / total : 1.0;
}

void SgdOptimizer::UpdateAffine(int affine_index, AffineLayer& layer, ConstMatrixView in,
                                MatrixView out_grad, float lr) {
  ++stats_.updates;
  if (options_.max_change_per_sample > 0.0) {
    const double scale = MaxChangeScale(in, out_grad, lr);
    const bool limited = scale < 1.0;
    if (stats_.scales.empty()) stats_.scales.assign(kScaleBins, 0.0);
    stats_.scales[static_cast<size_t>(ScaleBin(scale, limited))] += 1.0;
    if (limited) {
      ++stats_.limited;
      lr = static_cast<float>(lr * scale);
    }
  }
  const float frames = static_cast<float>(in.rows);
  const float decay = 1.0f - lr * options_.l2 * frames;
  const float lr_bias = lr * layer.BiasLearnRateCoef();
  if (options_.momentum == 0.0f) {
    backend_->Gemm(true, false, -lr, out_grad, in, decay, layer.Weights());
    backend_->SumRows(-lr_bias, out_grad, 1.0f, layer.Bias());
    return;
  }
  if (static_cast<int>(corr_w_.size()) <= affine_index) {
    corr_w_.resize(affine_index + 1);
    corr_b_.resize(affine_index + 1);
  }
  if (corr_w_[affine_index].Rows() == 0) {
    corr_w_[affine_index] = Matrix(*backend_, layer.OutputDim(), layer.InputDim());
    corr_b_[affine_index] = Matrix(*backend_, 1, layer.OutputDim());
  }
  MatrixView cw = corr_w_[affine_index];
  MatrixView cb = corr_b_[affine_index];
  layer.ParamGradient(*backend_, in, out_grad, 1.0f, options_.momentum, cw, cb);
  backend_->Axpby(-lr, cw, decay, layer.Weights());
  backend_->Axpby(-lr_bias, cb, 1.0f, layer.Bias());
}

}  // namespace mavg
