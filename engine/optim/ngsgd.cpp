#include "engine/optim/ngsgd.h"

#include <algorithm>
#include <cmath>

#include "engine/backend/scale_histogram.h"

namespace mavg {

NgsgdOptimizer::NgsgdOptimizer(Backend& backend, const NgsgdOptions& options)
    : backend_(&backend),
      options_(options),
      defer_(options.batching == NgsgdBatching::kAlways ||
             (options.batching == NgsgdBatching::kAuto && backend.RunsAsynchronously())) {}

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
  // Counters per layer (a batch's steps run at once), grown keeping what they hold.
  auto grow = [this](DeviceBuffer<double>& buf, size_t size) {
    if (buf.Size() >= size) return;
    DeviceBuffer<double> grown(*backend_, size);
    const std::vector<double> zeros(size, 0.0);
    grown.CopyFromHost(zeros.data(), zeros.size());
    if (buf.Size() > 0) {
      backend_->CopyBytesOnDevice(grown.Data(), buf.Data(), buf.Size() * sizeof(double));
    }
    buf = std::move(grown);
  };
  grow(limited_, in_.size());
  grow(scales_, in_.size() * kScaleBins);
  scales_taken_.resize(scales_.Size(), 0.0);
}

void NgsgdOptimizer::Prepare(const Network& net) {
  for (int k = 0; k < net.NumAffine(); ++k) Ensure(k, net.Affine(k));
}

void NgsgdOptimizer::Reset() {
  FlushPending();
  if (options_.reset_each_epoch) ClearState();
}

void NgsgdOptimizer::ClearState() {
  FlushPending();
  for (auto& p : in_) p->Reset();
  for (auto& p : out_) p->Reset();
}

std::vector<MatrixView> NgsgdOptimizer::State() {
  FlushPending();
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

NgsgdOptimizer::LayerWork& NgsgdOptimizer::Work(size_t slot, int64_t n, int64_t din) {
  Backend& b = *backend_;
  if (work_.size() <= slot) work_.resize(slot + 1);
  LayerWork& w = work_[slot];
  if (w.xa.Rows() < n || w.xa.Cols() < din + 1)
    w.xa = Matrix(b, std::max(n, w.xa.Rows()), std::max<int64_t>(din + 1, w.xa.Cols()));
  if (w.prod_in.Cols() < n) w.prod_in = Matrix(b, 1, n), w.prod_out = Matrix(b, 1, n);
  if (w.gammas.Size() == 0) w.gammas = DeviceBuffer<float>(b, 3);
  return w;
}

MatrixView NgsgdOptimizer::Xa(const LayerUpdate& u, LayerWork& w) {
  return w.xa.View().RowRange(0, u.in.rows).ColRange(0, u.in.cols + 1);
}

void NgsgdOptimizer::UpdateAffine(int k, AffineLayer& layer, ConstMatrixView in,
                                  MatrixView out_grad, float lr) {
  Ensure(k, layer);
  LayerUpdate u;
  u.k = k;
  u.weights = layer.Weights();
  u.bias = layer.Bias();
  u.bias_coef = layer.BiasLearnRateCoef();
  u.in = in;
  u.out_grad = out_grad;  // preconditioned in place (UpdateAffine's contract)
  u.lr = lr;
  if (!defer_ || !in_step_) {
    UpdateNow(u);
    return;
  }
  // A layer given twice in one bracket: its earlier update goes first.
  for (const LayerUpdate& p : pending_) {
    if (p.k == k) {
      FlushPending();
      break;
    }
  }
  pending_.push_back(u);
}

void NgsgdOptimizer::UpdateNow(const LayerUpdate& u) {
  Backend& b = *backend_;
  const int64_t n = u.in.rows, din = u.in.cols;
  LayerWork& w = Work(0, n, din);
  MatrixView xa = Xa(u, w);
  b.Copy(u.in, xa.ColRange(0, din));
  b.Fill(xa.ColRange(din, 1), 1.0f);  // the bias's input
  // gammas: gamma_in, gamma_out, then -lr s ms; all on the device.
  float* gammas = w.gammas.Data();
  in_[u.k]->Precondition(xa, w.prod_in.View().ColRange(0, n), gammas);
  out_[u.k]->Precondition(u.out_grad, w.prod_out.View().ColRange(0, n), gammas + 1);
  b.RunNgsgdSmall(StepTask(u, w));
  ++stats_.updates;
  Apply(u, w);
}

void NgsgdOptimizer::BeginStep() {
  // Updates left by a step an error stopped are dropped, not applied: the activations and
  // gradients they point to have been overwritten since.
  pending_.clear();
  in_step_ = true;
}

void NgsgdOptimizer::FinishStep() {
  in_step_ = false;
  FlushPending();
}

void NgsgdOptimizer::FlushPending() {
  if (pending_.empty()) return;
  // Taken out first, so that an error below leaves none to apply twice (a preconditioner left
  // mid-update then refuses its next minibatch with an error of its own).
  std::vector<LayerUpdate> pending;
  pending.swap(pending_);
  Backend& b = *backend_;
  // Every layer's preconditioners in phases: each round queues every layer's work up to its
  // next small step, then runs those steps as one batch.
  std::vector<OnlinePreconditioner*> running;
  for (const LayerUpdate& u : pending) {
    const int64_t n = u.in.rows, din = u.in.cols;
    LayerWork& w = Work(static_cast<size_t>(u.k), n, din);
    MatrixView xa = Xa(u, w);
    b.Copy(u.in, xa.ColRange(0, din));
    b.Fill(xa.ColRange(din, 1), 1.0f);
    in_[u.k]->Begin(xa, w.prod_in.View().ColRange(0, n), w.gammas.Data());
    out_[u.k]->Begin(u.out_grad, w.prod_out.View().ColRange(0, n), w.gammas.Data() + 1);
    running.push_back(in_[u.k].get());
    running.push_back(out_[u.k].get());
  }
  std::vector<NgsgdSmallTask> tasks;
  for (;;) {
    tasks.clear();
    for (OnlinePreconditioner* p : running) {
      NgsgdSmallTask t;
      if (p->Continue(&t)) tasks.push_back(t);
    }
    if (tasks.empty()) break;
    b.RunNgsgdSmallBatch(tasks);
  }
  tasks.clear();
  for (const LayerUpdate& u : pending) tasks.push_back(StepTask(u, work_[u.k]));
  b.RunNgsgdSmallBatch(tasks);
  for (const LayerUpdate& u : pending) {
    ++stats_.updates;
    Apply(u, work_[u.k]);
  }
}

NgsgdSmallTask NgsgdOptimizer::StepTask(const LayerUpdate& u, LayerWork& w) {
  const int64_t n = u.in.rows;
  float* gammas = w.gammas.Data();
  NgsgdSmallTask t;
  t.kind = NgsgdSmallKind::kStep;
  t.rows = n;
  t.lr = u.lr;
  t.max_change = options_.max_change_per_sample * static_cast<double>(n);
  t.max_change_lr = options_.max_change_mode == MaxChangeMode::kFork ? 1.0 : u.lr;
  t.row_a = w.prod_in.View().data;
  t.row_b = w.prod_out.View().data;
  t.gamma_in = gammas;
  t.gamma_out = gammas + 1;
  t.neg_step = gammas + 2;
  t.limited = limited_.Data() + u.k;
  t.scales = scales_.Data() + static_cast<size_t>(u.k) * kScaleBins;
  return t;
}

void NgsgdOptimizer::Apply(const LayerUpdate& u, LayerWork& w) {
  Backend& b = *backend_;
  const int64_t din = u.in.cols;
  MatrixView xa = Xa(u, w);
  MatrixView g = u.out_grad;
  float* gammas = w.gammas.Data();
  if (b.HostReadsDeviceMemory()) {
    // The step's scale read where it lies, into the GEMMs' alpha: no pass over Pout.
    const float step = gammas[2];
    b.Gemm(true, false, step, g, xa.ColRange(0, din), 1.0f, u.weights);
    b.Gemm(true, false, u.bias_coef * step, xa.ColRange(din, 1), g, 1.0f, u.bias);
    return;
  }
  b.AxpbyScaled(gammas + 2, 1.0f, g, 0.0f, g);  // g = -lr s ms Pout, on the device
  b.Gemm(true, false, 1.0f, g, xa.ColRange(0, din), 1.0f, u.weights);
  b.Gemm(true, false, u.bias_coef, xa.ColRange(din, 1), g, 1.0f, u.bias);
}

Optimizer::UpdateStats NgsgdOptimizer::TakeUpdateStats() {
  FlushPending();
  std::vector<double> limited = limited_.ToHost();
  double total = 0.0;
  for (double v : limited) total += v;
  if (total != 0.0) {
    std::fill(limited.begin(), limited.end(), 0.0);
    limited_.CopyFromHost(limited.data(), limited.size());
  }
  UpdateStats s = std::exchange(stats_, UpdateStats{});
  s.limited = static_cast<int64_t>(total);
  // The scale factors since the last take, every layer's pooled: the device's counts only grow
  // (one read, no write back).
  const std::vector<double> scales = scales_.ToHost();
  s.scales.assign(kScaleBins, 0.0);
  for (size_t i = 0; i < scales.size(); ++i) {
    s.scales[i % kScaleBins] += scales[i] - scales_taken_[i];
  }
  scales_taken_ = scales;
  return s;
}

}  // namespace mavg
