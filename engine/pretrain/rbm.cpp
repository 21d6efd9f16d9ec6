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
  pos_cols_ = Matrix(backend, 1, visible);
  neg_cols_ = Matrix(backend, 1, visible);
  scalars_ = DeviceBuffer<float>(backend, 4);
  stats_ = DeviceBuffer<double>(backend, kRbmStatCount);
  SetLearningRate(0.0f);
  ZeroStats();
}

void Rbm::ZeroStats() {
  const std::vector<double> zeros(kRbmStatCount, 0.0);
  stats_.CopyFromHost(zeros.data(), zeros.size());
}

void Rbm::SetLearningRate(float lr) { scalars_.CopyFromHost(&lr, 1); }

float Rbm::LearningRate() {
  float lr = 0.0f;
  backend_->CopyBytesToHost(&lr, scalars_.Data(), sizeof(float));
  return lr;
}

Cd1Stats Rbm::TakeStats() {
  const std::vector<double> s = stats_.ToHost();
  Cd1Stats out;
  out.recon_sq_error = s[kRbmReconSqError];
  out.guards = static_cast<int64_t>(s[kRbmGuards]);
  out.non_finite = static_cast<int64_t>(s[kRbmNonFinite]);
  out.guard_pos_std = s[kRbmGuardPosStd];
  out.guard_neg_std = s[kRbmGuardNegStd];
  ZeroStats();
  return out;
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
  pos_sq_ = Matrix(*backend_, 1, rows);
  neg_sq_ = Matrix(*backend_, 1, rows);
  diff_sq_ = Matrix(*backend_, 1, rows);
  capacity_ = rows;
}

void Rbm::Cd1(ConstMatrixView pos_vis, float momentum, float l2, uint64_t seed, uint64_t offset) {
  MAVG_CHECK(pos_vis.cols == visible_, "RBM input has {} columns, expected {}", pos_vis.cols,
             visible_);
  Backend& b = *backend_;
  const int64_t n = pos_vis.rows;
  EnsureWorkspace(n);
  MatrixView pos_hid = pos_hid_.View().RowRange(0, n);
  MatrixView sample = hid_sample_.View().RowRange(0, n);
  MatrixView neg_vis = neg_vis_.View().RowRange(0, n);
  MatrixView neg_hid = neg_hid_.View().RowRange(0, n);
  MatrixView diff = diff_.View().RowRange(0, n);
  MatrixView diff_sq = diff_sq_.View().ColRange(0, n);

  HiddenProbs(pos_vis, pos_hid);
  b.SampleBernoulli(seed, offset, pos_hid, sample);
  Reconstruct(sample, neg_vis);
  HiddenProbs(neg_vis, neg_hid);

  // The decisions (backend/rbm_small.h): reconstruction error (before the update, as Kaldi's
  // Mse of the same minibatch), the guard, this step's gated learning rate.
  b.Copy(neg_vis, diff);
  b.Axpby(-1.0f, pos_vis, 1.0f, diff);
  b.RowSumSquares(diff, diff_sq);
  RbmSmallTask t;
  t.rows = n;
  t.visible = visible_;
  t.gaussian = units_ == RbmUnits::kGaussian;
  t.diff_row_sq = diff_sq.data;
  if (t.gaussian) {
    MatrixView pos_sq = pos_sq_.View().ColRange(0, n), neg_sq = neg_sq_.View().ColRange(0, n);
    b.SumRows(1.0f, pos_vis, 0.0f, pos_cols_);
    b.SumRows(1.0f, neg_vis, 0.0f, neg_cols_);
    b.RowSumSquares(pos_vis, pos_sq);
    b.RowSumSquares(neg_vis, neg_sq);
    t.pos_col_sums = pos_cols_.View().data;
    t.neg_col_sums = neg_cols_.View().data;
    t.pos_row_sq = pos_sq.data;
    t.neg_row_sq = neg_sq.data;
  }
  float* s = scalars_.Data();
  t.lr = s;
  t.scale = s + 1;
  t.gate = s + 2;
  t.lr_gated = s + 3;
  t.stats = stats_.Data();
  b.RunRbmSmall(t);

  // At a guard: parameters scaled, momenta zeroed, no step (lr_gated = 0). Otherwise scale and
  // gate are 1 and this is
  //   dW = m dW + (lr/N) (h+^T v+ - h-^T v-) - lr l2 W,  db, dc likewise,  params += deltas,
  // with lr/N applied to the hidden probabilities (N x hidden, smaller than W).
  const float inv_n = 1.0f / static_cast<float>(n);
  MatrixView dw(deltas_.View().data, hidden_, visible_);
  MatrixView db(deltas_.View().data + w_size(), 1, visible_);
  MatrixView dc(deltas_.View().data + w_size() + visible_, 1, hidden_);
  b.AxpbyScaled(s + 1, 1.0f, params_, 0.0f, params_);
  b.AxpbyScaled(s + 2, 1.0f, deltas_, 0.0f, deltas_);
  b.AxpbyScaled(s + 3, inv_n, pos_hid, 0.0f, pos_hid);  // (lr/N) h+
  b.AxpbyScaled(s + 3, inv_n, neg_hid, 0.0f, neg_hid);  // (lr/N) h-
  b.Gemm(true, false, -1.0f, neg_hid, neg_vis, momentum, dw);
  b.Gemm(true, false, 1.0f, pos_hid, pos_vis, 1.0f, dw);
  b.AxpbyScaled(s + 3, -l2, Weights(), 1.0f, dw);
  b.SumRows(1.0f, pos_vis, 0.0f, pos_cols_);
  b.SumRows(-1.0f, neg_vis, 1.0f, pos_cols_);  // colsum(v+ - v-)
  b.AxpbyScaled(s + 3, inv_n, pos_cols_, momentum, db);
  b.SumRows(-1.0f, neg_hid, momentum, dc);
  b.SumRows(1.0f, pos_hid, 1.0f, dc);
  b.Axpby(1.0f, deltas_, 1.0f, params_);
}

}  // namespace mavg
