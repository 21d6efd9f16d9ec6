#include "engine/optim/ngsgd.h"

#include <cmath>

namespace mavg {

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
                                  ConstMatrixView out_grad, float lr) {
  Ensure(k, layer);
  Backend& b = *backend_;
  const int64_t n = in.rows;
  const int din = layer.InputDim(), dout = layer.OutputDim();
  if (xa_.Rows() < n || xa_.Cols() < din + 1)
    xa_ = Matrix(b, std::max(n, xa_.Rows()), std::max<int64_t>(din + 1, xa_.Cols()));
  if (g_.Rows() < n || g_.Cols() < dout)
    g_ = Matrix(b, std::max(n, g_.Rows()), std::max<int64_t>(dout, g_.Cols()));
  if (prod_in_.Cols() < n) prod_in_ = Matrix(b, 1, n), prod_out_ = Matrix(b, 1, n);
  MatrixView xa = xa_.View().RowRange(0, n).ColRange(0, din + 1);
  MatrixView g = g_.View().RowRange(0, n).ColRange(0, dout);
  MatrixView pin = prod_in_.View().ColRange(0, n), pout = prod_out_.View().ColRange(0, n);
  b.Copy(in, xa.ColRange(0, din));
  b.Fill(xa.ColRange(din, 1), 1.0f);  // the bias's input
  b.Copy(out_grad, g);

  const float gamma_in = in_[k]->Precondition(xa, pin);
  const float gamma_out = out_[k]->Precondition(g, pout);
  const double s = static_cast<double>(gamma_in) * gamma_out;

  double ms = 1.0;
  if (options_.max_change_per_sample > 0.0) {
    std::vector<float> a(static_cast<size_t>(n)), c(static_cast<size_t>(n));
    b.CopyToHost(pin, a.data());
    b.CopyToHost(pout, c.data());
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += std::sqrt(static_cast<double>(a[i]) * c[i]);
    const double tot = lr * s * sum;
    const double max_change = options_.max_change_per_sample * static_cast<double>(n);
    if (tot > max_change) {
      ms = max_change / tot;
      ++stats_.limited;
    }
  }
  ++stats_.updates;
  const float step = static_cast<float>(lr * s * ms);
  b.Gemm(true, false, -step, g, xa.ColRange(0, din), 1.0f, layer.Weights());
  b.Gemm(true, false, -step * layer.BiasLearnRateCoef(), xa.ColRange(din, 1), g, 1.0f,
         layer.Bias());
}

}  // namespace mavg
