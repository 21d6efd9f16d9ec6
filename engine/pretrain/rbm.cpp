#include "engine/pretrain/rbm.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"

namespace mavg {

Rbm::Rbm(Backend& backend, int visible, int hidden, RbmUnits visible_units)
    : backend_(&backend), visible_(visible), hidden_(hidden), units_(visible_units) {
  MAVG_CHECK(visible > 0 && hidden > 0, "RBM needs positive sizes, got {} x {}", visible, hidden);
  const int64_t n = w_size() + visible + hidden;
  params_ = Matrix(backend, 1, n);
  deltas_ = Matrix(backend, 1, n);
  col_sums_ = Matrix(backend, 1, std::max(visible, hidden));
}

void Rbm::InitRandom(float stddev, uint64_t seed) {
  backend_->Fill(params_, 0.0f);
  backend_->RandomGaussian(seed, 0, stddev, Weights());
  ZeroMomenta();
}

void Rbm::SetVisibleBiasFromMeans(const std::vector<double>& means) {
  MAVG_CHECK(static_cast<int>(means.size()) == visible_,
             "visible-bias means: {} values for {} units", means.size(), visible_);
  std::vector<float> b(means.size());
  for (size_t i = 0; i < means.size(); ++i) {
    const double p = std::clamp(means[i], 1e-4, 0.9999);
    b[i] = static_cast<float>(std::log(p / (1.0 - p)));
  }
  backend_->CopyFromHost(b.data(), VisibleBias());
}

void Rbm::ZeroMomenta() { backend_->Fill(deltas_, 0.0f); }

void Rbm::HiddenProbs(ConstMatrixView v, MatrixView h) const {
  backend_->AddRowVector(1.0f, HiddenBias(), 0.0f, h);
  backend_->Gemm(false, true, 1.0f, v, Weights(), 1.0f, h);
  backend_->Sigmoid(h, h);
}

void Rbm::Reconstruct(ConstMatrixView h, MatrixView v) const {
  backend_->AddRowVector(1.0f, VisibleBias(), 0.0f, v);
  backend_->Gemm(false, false, 1.0f, h, Weights(), 1.0f, v);
  if (units_ == RbmUnits::kBernoulli) backend_->Sigmoid(v, v);
}

void Rbm::EnsureWorkspace(int64_t rows) {
  if (rows <= capacity_) return;
  pos_hid_ = Matrix(*backend_, rows, hidden_);
  hid_sample_ = Matrix(*backend_, rows, hidden_);
  neg_vis_ = Matrix(*backend_, rows, visible_);
  neg_hid_ = Matrix(*backend_, rows, hidden_);
  diff_ = Matrix(*backend_, rows, visible_);
  capacity_ = rows;
}

// Standard deviation of all elements (Kaldi's ComputeStdDev: sqrt(E[x^2] - E[x]^2)).
double Rbm::StdDev(ConstMatrixView x) {
  MatrixView sums = col_sums_.View().ColRange(0, x.cols);
  backend_->SumRows(1.0f, x, 0.0f, sums);
  std::vector<float> host(static_cast<size_t>(x.cols));
  backend_->CopyToHost(sums, host.data());
  double sum = 0.0;
  for (float s : host) sum += s;
  const double n = static_cast<double>(x.Size());
  const double mean = sum / n;
  return std::sqrt(std::max(0.0, backend_->SumSquares(x) / n - mean * mean));
}

Cd1Result Rbm::Cd1(ConstMatrixView pos_vis, float lr, float momentum, float l2, uint64_t seed,
                   uint64_t offset) {
  MAVG_CHECK(pos_vis.cols == visible_, "RBM input has {} columns, expected {}", pos_vis.cols,
             visible_);
  const int64_t n = pos_vis.rows;
  EnsureWorkspace(n);
  MatrixView pos_hid = pos_hid_.View().RowRange(0, n);
  MatrixView sample = hid_sample_.View().RowRange(0, n);
  MatrixView neg_vis = neg_vis_.View().RowRange(0, n);
  MatrixView neg_hid = neg_hid_.View().RowRange(0, n);

  HiddenProbs(pos_vis, pos_hid);
  backend_->SampleBernoulli(seed, offset, pos_hid, sample);
  Reconstruct(sample, neg_vis);
  HiddenProbs(neg_vis, neg_hid);

  Cd1Result r;
  if (units_ == RbmUnits::kGaussian) {
    r.pos_std = StdDev(pos_vis);
    r.neg_std = StdDev(neg_vis);
    MAVG_CHECK(std::isfinite(r.neg_std),
               "Gaussian-Bernoulli RBM: the reconstruction is not finite");
    if (r.pos_std * 2 < r.neg_std) {
      const float s = static_cast<float>(r.pos_std / r.neg_std);
      backend_->Axpby(s, params_, 0.0f, params_);
      ZeroMomenta();
      r.guard = true;
    }
  }
  // Reconstruction error (before the update, as Kaldi's Mse of the same minibatch).
  MatrixView diff = diff_.View().RowRange(0, n);
  backend_->Copy(neg_vis, diff);
  backend_->Axpby(-1.0f, pos_vis, 1.0f, diff);
  r.recon_sq_error = backend_->SumSquares(diff);
  if (r.guard) return r;

  const float a = lr / static_cast<float>(n);
  MatrixView dw(deltas_.View().data, hidden_, visible_);
  MatrixView db(deltas_.View().data + w_size(), 1, visible_);
  MatrixView dc(deltas_.View().data + w_size() + visible_, 1, hidden_);
  backend_->Gemm(true, false, -a, neg_hid, neg_vis, momentum, dw);
  backend_->Gemm(true, false, a, pos_hid, pos_vis, 1.0f, dw);
  backend_->Axpby(-lr * l2, Weights(), 1.0f, dw);
  backend_->SumRows(-a, neg_vis, momentum, db);
  backend_->SumRows(a, pos_vis, 1.0f, db);
  backend_->SumRows(-a, neg_hid, momentum, dc);
  backend_->SumRows(a, pos_hid, 1.0f, dc);
  backend_->Axpby(1.0f, deltas_, 1.0f, params_);
  return r;
}

}  // namespace mavg
