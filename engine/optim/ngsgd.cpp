#include "engine/optim/ngsgd.h"

#include <cmath>

namespace mavg {

NgsgdOptimizer::NgsgdOptimizer(Backend& backend, const NgsgdOptions& options)
    : backend_(&backend), options_(options), gammas_(backend, 3), limited_(backend, 1) {
  const double zero = 0.0;
  limited_.CopyFromHost(&zero, 1);
}

void NgsgdOptimizer::Ensure(int k, const AffineLayer& layer) {
  if (static_cast<int>(in_.size()) <= k) {
    in_.resize(k + 1);
    out_.resize(k + 1);
  }
  if (!in_[k]) {
    in_[k] = std::make_unique<OnlinePreconditioner>(*backend_, options_.in);
    out_[k] = std::make_unique<OnlinePreconditioner>(*backend_, options_.out);
    in_[k]->PrepareState(layer.InputDim() + 1);
    out_[k]->PrepareState(layer.OutputDim());
  }
}

void NgsgdOptimizer::Prepare(const Network& net) {
  for (int k = 0; k < net.NumAffine(); ++k) Ensure(k, net.Affine(k));
}

void NgsgdOptimizer::Reset() {
  if (!options_.reset_each_epoch) return;
  for (auto& p : in_) p->Reset();
  for (auto& p : out_) p->Reset();
}

std::vector<MatrixView> NgsgdOptimizer::State() {
  std::vector<MatrixView> out;
  for (size_t k = 0; k < in_.size(); ++k) {
    for (MatrixView v : in_[k]->State()) out.push_back(v);
    for (MatrixView v : out_[k]->State()) out.push_back(v);
  }
  return out;
}

void NgsgdOptimizer::StateLoaded() {
  for (size_t k = 0; k < in_.size(); ++k) {
    in_[k]->StateLoaded();
    out_[k]->StateLoaded();
  }
}

void NgsgdOptimizer::UpdateAffine(int k, AffineLayer& layer, ConstMatrixView in,
                                  MatrixView out_grad, float lr) {
  Ensure(k, layer);
  Backend& b = *backend_;
  const int64_t n = in.rows;
  const int din = layer.InputDim();
  if (xa_.Rows() < n || xa_.Cols() < din + 1)
    xa_ = Matrix(b, std::max(n, xa_.Rows()), std::max<int64_t>(din + 1, xa_.Cols()));
  if (prod_in_.Cols() < n) prod_in_ = Matrix(b, 1, n), prod_out_ = Matrix(b, 1, n);
  MatrixView xa = xa_.View().RowRange(0, n).ColRange(0, din + 1);
  MatrixView g = out_grad;  // preconditioned in place (UpdateAffine's contract)
  MatrixView pin = prod_in_.View().ColRange(0, n), pout = prod_out_.View().ColRange(0, n);
  b.Copy(in, xa.ColRange(0, din));
  b.Fill(xa.ColRange(din, 1), 1.0f);  // the bias's input

  // gammas_: gamma_in, gamma_out, then -lr s ms; all on the device.
  float* gammas = gammas_.Data();
  in_[k]->Precondition(xa, pin, gammas);
  out_[k]->Precondition(g, pout, gammas + 1);
  NgsgdSmallTask t;
  t.kind = NgsgdSmallKind::kStep;
  t.rows = n;
  t.lr = lr;
  t.max_change = options_.max_change_per_sample * static_cast<double>(n);
  t.max_change_lr = options_.max_change_mode == MaxChangeMode::kFork ? 1.0 : lr;
  t.row_a = pin.data;
  t.row_b = pout.data;
  t.gamma_in = gammas;
  t.gamma_out = gammas + 1;
  t.neg_step = gammas + 2;
  t.limited = limited_.Data();
  b.RunNgsgdSmall(t);
  ++stats_.updates;
  const float coef = layer.BiasLearnRateCoef();
  if (b.HostReadsDeviceMemory()) {
    // The step's scale read where it lies, into the GEMMs' alpha: no pass over Pout.
    const float step = gammas[2];
    b.Gemm(true, false, step, g, xa.ColRange(0, din), 1.0f, layer.Weights());
    b.Gemm(true, false, coef * step, xa.ColRange(din, 1), g, 1.0f, layer.Bias());
    return;
  }
  b.AxpbyScaled(gammas + 2, 1.0f, g, 0.0f, g);  // g = -lr s ms Pout, on the device
  b.Gemm(true, false, 1.0f, g, xa.ColRange(0, din), 1.0f, layer.Weights());
  b.Gemm(true, false, coef, xa.ColRange(din, 1), g, 1.0f, layer.Bias());
}

Optimizer::UpdateStats NgsgdOptimizer::TakeUpdateStats() {
  double limited = 0.0;
  backend_->CopyBytesToHost(&limited, limited_.Data(), sizeof(double));
  if (limited != 0.0) {
    const double zero = 0.0;
    limited_.CopyFromHost(&zero, 1);
  }
  UpdateStats s = std::exchange(stats_, UpdateStats{});
  s.limited = static_cast<int64_t>(limited);
  return s;
}

}  // namespace mavg
