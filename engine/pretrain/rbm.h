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
// skipped, W, b and c are scaled by std(v+)/std(v-), the momenta are zeroed and the learning
// rate is lowered by 10% (until the caller sets it again, as Kaldi's momentum schedule does).
// W is [hidden x visible], the layout of an affine layer's weights, so a trained RBM becomes
// affine(W, c) + sigmoid. All arithmetic goes through the Backend, the guard's decision and the
// statistics too (backend/rbm_small.h): a CD-1 step queues device work only, and TakeStats()
// reads what the steps since its last call accumulated.

#include <cstdint>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/device_buffer.h"

namespace mavg {

enum class RbmUnits { kBernoulli, kGaussian };

// What the CD-1 steps since the last TakeStats() accumulated.
struct Cd1Stats {
  double recon_sq_error = 0.0;  // sum over the minibatches of ||v- - v+||^2
  int64_t guards = 0;           // explosion-guard triggers (steps skipped)
  int64_t non_finite = 0;       // steps whose reconstruction was not finite (not applied)
  double guard_pos_std = 0.0;   // the last trigger's std of v+ and of v-
  double guard_neg_std = 0.0;
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

  // The learning rate of the following steps (the guard lowers it by 10% at each trigger).
  void SetLearningRate(float lr);
  float LearningRate();  // (synchronizes)
  // One CD-1 step on the minibatch v+ [N x visible] with momentum m and weight cost l2; hidden
  // states are sampled from draws offset.. of the stream `seed` (N x hidden draws per step).
  void Cd1(ConstMatrixView pos_vis, float momentum, float l2, uint64_t seed, uint64_t offset);
  // The statistics since the last call (synchronizes), then zeroed.
  Cd1Stats TakeStats();
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
  void ZeroStats();

  Backend* backend_;  // [not null], not owned
  int visible_, hidden_;
  RbmUnits units_;
  Matrix params_;  // [1 x (hidden*visible + visible + hidden)]: W, b, c
  Matrix deltas_;  // the same layout: momentum buffers dW, db, dc
  Matrix pos_hid_, hid_sample_, neg_vis_, neg_hid_, diff_;  // [capacity x ...] workspaces
  Matrix pos_cols_, neg_cols_;                              // [1 x visible] column sums
  Matrix pos_sq_, neg_sq_, diff_sq_;                        // [1 x capacity] row sums of squares
  DeviceBuffer<float> scalars_;  // [4]: lr, scale, gate, lr * gate (backend/rbm_small.h)
  DeviceBuffer<double> stats_;   // [kRbmStatCount], accumulated since TakeStats
  int64_t capacity_ = 0;
};

}  // namespace mavg
