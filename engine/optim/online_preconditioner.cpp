#include "engine/optim/online_preconditioner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "engine/core/error.h"

namespace mavg {
namespace {

constexpr int kInitialUpdates = 10;  // updates before update_period skipping starts
constexpr int kInitIterations = 3;   // passes over the first minibatch at initialisation

// E_ii = 1 / (beta / d_i + 1), beta = rho (1 + alpha) + alpha sum(d) / D.
std::vector<double> ComputeE(const std::vector<double>& d, double rho, double alpha, int dim) {
  const double beta = rho * (1.0 + alpha) + alpha * std::accumulate(d.begin(), d.end(), 0.0) / dim;
  std::vector<double> e(d.size());
  for (size_t i = 0; i < d.size(); ++i) e[i] = 1.0 / (beta / d[i] + 1.0);
  return e;
}

}  // namespace

OnlinePreconditioner::OnlinePreconditioner(Backend& backend, const PreconditionerOptions& o)
    : backend_(&backend), options_(o), init_gamma_(backend, 1) {
  MAVG_CHECK(o.rank > 0, "ngsgd rank must be positive, got {}", o.rank);
  MAVG_CHECK(o.update_period > 0, "ngsgd update_period must be positive");
  MAVG_CHECK(o.num_samples_history > 0, "ngsgd num_samples_history must be positive");
  MAVG_CHECK(o.alpha >= 0, "ngsgd alpha must be >= 0");
  MAVG_CHECK(o.epsilon > 0 && o.delta > 0, "ngsgd epsilon and delta must be positive");
  MAVG_CHECK(o.eta_max > 0 && o.eta_max <= 1, "ngsgd eta_max must be in (0, 1], got {}", o.eta_max);
}

double OnlinePreconditioner::Eta(int64_t n) const {
  return std::min(options_.eta_max,
                  1.0 - std::exp(-static_cast<double>(n) / options_.num_samples_history));
}

void OnlinePreconditioner::PrepareState(int dim) {
  if (dim_ == dim && w_.Rows() > 0) return;
  dim_ = dim;
  // At most (D + 1) / 2, as nnet3's natural-gradient components cap it: a rank near D leaves
  // (D - R) dimensions for rho and lets the model fit directions the data never has. nnet2 and
  // the authors' fork cap it at D - 1 only.
  const int cap = options_.nnet2_rank_cap ? dim - 1 : (dim + 1) / 2;
  rank_ = dim <= 1 ? 0 : std::min(options_.rank, cap);
  if (rank_ <= 0) return;
  Backend& b = *backend_;
  const int r = rank_;
  w_ = Matrix(b, r, dim);
  scalars_ = Matrix(b, 1, 2 * (r + 3));
  j_ = Matrix(b, r, dim);
  w1_ = Matrix(b, r, dim);
  small_ = Matrix(b, r, r);
  small2_ = Matrix(b, r, r);
  coef_ = Matrix(b, 1, r);
  work_ = DeviceBuffer<double>(b, static_cast<size_t>(NgsgdSmallWorkDoubles(r)));
}

void OnlinePreconditioner::InitDefault(int dim) {
  PrepareState(dim);
  const int r = rank_;
  // rho = d = epsilon, and Kaldi's special orthonormal start: row i has entries in columns
  // i, i + R, i + 2R, ..., the first 1.1 and the others 1, normalised. With equal entries the
  // rows would sum to the all-ones direction whenever R divides D, and softmax output
  // derivatives have no component along it: the model would keep a rank on a direction the data
  // never visits. Then W = E^{1/2} X with e_ii = 1 / (2 + alpha (D + R) / D).
  std::vector<double> state(static_cast<size_t>(r) + 1, options_.epsilon);
  backend_->CopyBytesToDevice(StateDoubles(), state.data(), state.size() * sizeof(double));
  const double e = 1.0 / (2.0 + (dim + r) * options_.alpha / dim);
  constexpr double kFirst = 1.1;
  std::vector<float> w(static_cast<size_t>(r) * dim, 0.0f);
  for (int i = 0; i < r; ++i) {
    const int count = (dim - i + r - 1) / r;
    const double norm = std::sqrt(e / (kFirst * kFirst + count - 1));
    for (int c = i; c < dim; c += r) {
      w[static_cast<size_t>(i) * dim + c] = static_cast<float>((c == i ? kFirst : 1.0) * norm);
    }
  }
  backend_->CopyFromHost(w.data(), w_);
  t_ = 0;
  skipped_ = 0;
}

void OnlinePreconditioner::Precondition(MatrixView x, MatrixView row_products, float* gamma) {
  Begin(x, row_products, gamma);
  NgsgdSmallTask task;
  while (Continue(&task)) backend_->RunNgsgdSmall(task);
}

void OnlinePreconditioner::Begin(MatrixView x, MatrixView row_products, float* gamma) {
  MAVG_CHECK(stage_ == Stage::kIdle, "Precondition: the previous minibatch is not finished");
  MAVG_CHECK(row_products.rows == 1 && row_products.cols == x.rows,
             "Precondition: row products are {}x{}, need 1x{}", row_products.rows,
             row_products.cols, x.rows);
  job_ = Job{};
  job_.x = x;
  job_.row_products = row_products;
  job_.gamma = gamma;
  stage_ = Stage::kStart;
}

bool OnlinePreconditioner::Continue(NgsgdSmallTask* task) {
  Backend& b = *backend_;
  const MatrixView x = job_.x;
  for (;;) {
    switch (stage_) {
      case Stage::kIdle:
        return false;
      case Stage::kStart:
        if (x.cols == 1) {  // one dimension: preconditioning is the identity
          b.RowSumSquares(x, job_.row_products);
          b.Fill(MatrixView(job_.gamma, 1, 1), 1.0f);
          stage_ = Stage::kIdle;
          return false;
        }
        if (t_ < 0) {  // initialise: passes over a copy of this minibatch
          InitDefault(static_cast<int>(x.cols));
          init_x_ = Matrix(b, x.rows, x.cols);
          init_prod_ = Matrix(b, 1, x.rows);
          job_.init_passes = kInitIterations;
          job_.initializing = true;
        }
        stage_ = Stage::kNextPass;
        break;
      case Stage::kNextPass:
        if (job_.init_passes > 0) {
          --job_.init_passes;
          b.Copy(x, init_x_);
          StartPass(init_x_, init_prod_, init_gamma_.Data(), /*update=*/true, task);
          return true;
        }
        if (job_.initializing) {  // the initialisation's passes are done
          job_.initializing = false;
          init_x_ = Matrix();
          init_prod_ = Matrix();
          t_ = 0;
          skipped_ = 0;
        }
        MAVG_CHECK(x.cols == dim_, "Precondition: {} columns, the preconditioner has {}", x.cols,
                   dim_);
        job_.own_pass = true;
        job_.update = t_ < kInitialUpdates || skipped_ >= options_.update_period - 1;
        StartPass(x, job_.row_products, job_.gamma, job_.update, task);
        return true;
      case Stage::kAfterSubspace:
        if (FormNextBasis(task)) {
          stage_ = Stage::kAfterReorthogonalize;
          return true;
        }
        stage_ = PassEnd();
        break;
      case Stage::kAfterReorthogonalize:
        ApplyReorthogonalization();
        stage_ = PassEnd();
        break;
      case Stage::kDone:
        skipped_ = job_.update ? 0 : skipped_ + 1;
        job_ = Job{};
        stage_ = Stage::kIdle;
        return false;
    }
  }
}

NgsgdSmallTask OnlinePreconditioner::Task(NgsgdSmallKind kind, int64_t n) {
  NgsgdSmallTask t;
  t.kind = kind;
  t.rank = rank_;
  t.dim = dim_;
  t.rows = n;
  t.alpha = options_.alpha;
  t.epsilon = options_.epsilon;
  t.delta = options_.delta;
  t.eta = Eta(n);
  t.state = StateDoubles();
  t.work = work_.Data();
  return t;
}

void OnlinePreconditioner::StartPass(MatrixView x, MatrixView row_products, float* gamma,
                                     bool update, NgsgdSmallTask* task) {
  Backend& b = *backend_;
  const int64_t n = x.rows;
  const int r = rank_;
  pass_rows_ = n;
  if (h_.Rows() < n || h_.Cols() != r) h_ = Matrix(b, n, r), row_squares_ = Matrix(b, 1, n);
  MatrixView h = h_.View().RowRange(0, n);
  b.Gemm(false, true, 1.0f, x, w_, 0.0f, h);  // H = R W^T

  if (!update) {  // gamma = sqrt(tr(R R^T) / tr(P P^T))
    MatrixView rr = row_squares_.View().ColRange(0, n);
    b.RowSumSquares(x, rr);
    b.Gemm(false, false, -1.0f, h, w_, 1.0f, x);  // P = R - H W
    b.RowSumSquares(x, row_products);
    *task = Task(NgsgdSmallKind::kGamma, n);
    task->row_a = rr.data;
    task->row_b = row_products.data;
    task->gamma = gamma;
    stage_ = PassEnd();
    return;
  }

  b.Gemm(true, false, 1.0f, h, x, 0.0f, j_);        // J = H^T R
  b.Gemm(false, true, 1.0f, j_, j_, 0.0f, small_);  // K = J J^T
  b.Gemm(true, false, 1.0f, h, h, 0.0f, small2_);   // L = H^T H
  b.Gemm(false, false, -1.0f, h, w_, 1.0f, x);      // P = R - H W
  b.RowSumSquares(x, row_products);
  *task = Task(NgsgdSmallKind::kSubspace, n);
  task->k = small_.View().data;
  task->l = small2_.View().data;
  task->row_b = row_products.data;
  task->coef = coef_.View().data;
  task->matrix = small_.View().data;  // A replaces K (read before A is written)
  task->gamma = gamma;
  stage_ = Stage::kAfterSubspace;
}

bool OnlinePreconditioner::FormNextBasis(NgsgdSmallTask* task) {
  Backend& b = *backend_;
  // W_{t+1} = A B, B = J + coef (D_t + rho_t I) W_t rows.
  b.MulRowsAdd(coef_, w_, 1.0f, j_);
  b.Gemm(false, false, 1.0f, small_, j_, 0.0f, w1_);
  // Reorthogonalise where due: W_{t+1} <- M W_{t+1} (M = I otherwise). Where the host can
  // read the subspace step's verdict at once (the CPU) and it says not due, M = I is known
  // without O, and W_{t+1} stays as it is (what M W_{t+1} gives then, up to the sign of zeros).
  if (b.HostReadsDeviceMemory() && ngsgd_small::Work(work_.Data(), rank_).flags[0] == 0.0) {
    std::swap(w_, w1_);
    ++t_;
    return false;
  }
  b.Gemm(false, true, 1.0f, w1_, w1_, 0.0f, small2_);  // O = W W^T
  *task = Task(NgsgdSmallKind::kReorthogonalize, pass_rows_);
  task->l = small2_.View().data;
  task->matrix = small_.View().data;
  return true;
}

void OnlinePreconditioner::ApplyReorthogonalization() {
  Backend& b = *backend_;
  b.Copy(w1_, j_);
  b.Gemm(false, false, 1.0f, small_, j_, 0.0f, w1_);
  std::swap(w_, w1_);
  ++t_;
}

double OnlinePreconditioner::Rho() {
  MAVG_CHECK(rank_ > 0, "the preconditioner has no state");
  double rho = 0.0;
  backend_->CopyBytesToHost(&rho, StateDoubles() + rank_, sizeof(double));
  return rho;
}

std::vector<double> OnlinePreconditioner::D() {
  std::vector<double> d(static_cast<size_t>(std::max(rank_, 0)));
  if (rank_ > 0) backend_->CopyBytesToHost(d.data(), StateDoubles(), d.size() * sizeof(double));
  return d;
}

std::vector<double> OnlinePreconditioner::OrthonormalBasis() {
  MAVG_CHECK(t_ >= 0, "the preconditioner is not initialised");
  const std::vector<double> e = ComputeE(D(), Rho(), options_.alpha, dim_);
  std::vector<float> f(static_cast<size_t>(w_.Rows() * w_.Cols()));
  backend_->CopyToHost(w_, f.data());
  std::vector<double> w(f.begin(), f.end());
  for (int i = 0; i < rank_; ++i) {
    for (int c = 0; c < dim_; ++c) w[static_cast<size_t>(i) * dim_ + c] /= std::sqrt(e[i]);
  }
  return w;
}

void OnlinePreconditioner::SyncScalarsToState() {
  const double counters[2] = {static_cast<double>(t_), static_cast<double>(skipped_)};
  backend_->CopyBytesToDevice(StateDoubles() + rank_ + 1, counters, sizeof(counters));
}

void OnlinePreconditioner::SyncScalarsFromState() {
  double counters[2] = {0, 0};
  backend_->CopyBytesToHost(counters, StateDoubles() + rank_ + 1, sizeof(counters));
  t_ = static_cast<int64_t>(counters[0]);
  skipped_ = static_cast<int>(counters[1]);
}

std::vector<MatrixView> OnlinePreconditioner::State() {
  if (rank_ <= 0) return {};
  SyncScalarsToState();
  return {w_.View(), scalars_.View()};
}

}  // namespace mavg
