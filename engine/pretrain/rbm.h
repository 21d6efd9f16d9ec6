#pragma once
// A restricted Boltzmann machine trained by contrastive divergence (CD-1), as Kaldi nnet1's
// Rbm component and rbm-train-cd1-frmshuff do it (docs/algorithms.md §3a-§3c):
//   h+ = sigmoid(v+ W^T + c)                      hidden probabilities
//   h~ ~ Bernoulli(h+)                            sampled hidden states (through the Backend)
//   v- = h~ W + b  (Gaussian visible units: linear, no noise)  |  sigmoid(h~ W + b)  (Bernoulli)
//   h- = sigmoid(v- W^T + c)
//   dW = m dW + (lr/N) (h+^T v+ - h-^T v-) - lr l2 W ;  W += dW
//   db = m db + (lr/N) colsum(v+ - v-) ;  dc = m dc + (lr/N) colsum(h+ - h-)
// Gaussian visible units get Kaldi's explosion guard: when std(v-) > 2 std(v+) the step is
// skipped, W, b and c are scaled by std(v+)/std(v-) and the momenta are zeroed; the caller
// lowers the learning rate (Kaldi: x 0.9 until the momentum schedule next sets it).
// W is [hidden x visible], the layout of an affine layer's weights, so a trained RBM becomes
// affine(W, c) + sigmoid. All arithmetic goes through the Backend.

#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/device_buffer.h"

namespace mavg {

enum class RbmUnits { kBernoulli, kGaussian };

struct Cd1Result {
  double recon_sq_error = 0.0;  // sum over the minibatch of ||v- - v+||^2
  bool guard = false;           // the explosion guard fired (no update was made)
  double pos_std = 0.0;         // Gaussian visible units: std of v+ and of v-
  double neg_std = 0.0;
};

class Rbm {
 public:
  Rbm(Backend& backend, int visible, int hidden, RbmUnits visible_units);
  Rbm(const Rbm&) = delete;
  Rbm& operator=(const Rbm&) = delete;
  Rbm(Rbm&&) = default;
  Rbm& operator=(Rbm&&) = default;

  int Visible() const { return visible_; }
  int Hidden() const { return hidden_; }
  RbmUnits VisibleUnits() const { return units_; }
  MatrixView Weights() { return Part(params_, 0, hidden_, visible_); }
  ConstMatrixView Weights() const { return Part(params_, 0, hidden_, visible_); }
  MatrixView VisibleBias() { return Part(params_, w_size(), 1, visible_); }
  ConstMatrixView VisibleBias() const { return Part(params_, w_size(), 1, visible_); }
  MatrixView HiddenBias() { return Part(params_, w_size() + visible_, 1, hidden_); }
  ConstMatrixView HiddenBias() const { return Part(params_, w_size() + visible_, 1, hidden_); }
  // Everything (W, b, c) as one [1 x n] view, e.g. for a checkpoint or a comparison.
  ConstMatrixView Params() const { return params_.View(); }

  // W ~ N(0, stddev^2) drawn through the Backend from `seed`; biases 0; momenta 0.
  void InitRandom(float stddev, uint64_t seed);
  // b = logit(clip(means, 1e-4, 0.9999)): Kaldi's <VisibleBiasCmvnFilename> initialisation
  // from the previous layer's mean activations ([visible] values).
  void SetVisibleBiasFromMeans(const std::vector<double>& means);

  // h = sigmoid(v W^T + c); v [N x visible], h [N x hidden].
  void HiddenProbs(ConstMatrixView v, MatrixView h) const;
  // v = h W + b, through a sigmoid for Bernoulli visible units; h [N x hidden], v [N x visible].
  void Reconstruct(ConstMatrixView h, MatrixView v) const;

  // One CD-1 step on the minibatch v+ [N x visible] with learning rate lr, momentum m and
  // weight cost l2; hidden states are sampled from draws offset.. of the stream `seed`
  // (N x hidden draws per step).
  Cd1Result Cd1(ConstMatrixView pos_vis, float lr, float momentum, float l2, uint64_t seed,
                uint64_t offset);
  void ZeroMomenta();

 private:
  int64_t w_size() const { return static_cast<int64_t>(hidden_) * visible_; }
  static MatrixView Part(Matrix& m, int64_t at, int64_t rows, int64_t cols) {
    return MatrixView(m.View().data + at, rows, cols);
  }
  static ConstMatrixView Part(const Matrix& m, int64_t at, int64_t rows, int64_t cols) {
    return ConstMatrixView(m.View().data + at, rows, cols);
  }
  void EnsureWorkspace(int64_t rows);
  double StdDev(ConstMatrixView x);

  Backend* backend_;  // [not null], not owned
  int visible_, hidden_;
  RbmUnits units_;
  Matrix params_;  // [1 x (hidden*visible + visible + hidden)]: W, b, c
  Matrix deltas_;  // the same layout: momentum buffers dW, db, dc
  Matrix pos_hid_, hid_sample_, neg_vis_, neg_hid_, diff_;  // [capacity x ...] workspaces
  Matrix col_sums_;                                         // [1 x max(visible, hidden)]
  int64_t capacity_ = 0;
};

}  // namespace mavg
