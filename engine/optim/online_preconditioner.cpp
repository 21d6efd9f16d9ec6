#include "engine/optim/online_preconditioner.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "engine/core/error.h"

namespace mavg {
namespace {

constexpr int kInitialUpdates = 10;  // updates before update_period skipping starts
constexpr int kInitIterations = 3;   // passes over the first minibatch at initialisation
constexpr double kConditionThreshold = 1e6;
constexpr double kOrthogonalityThreshold = 1e-3;

std::vector<double> ToHostDouble(Backend& b, ConstMatrixView m) {
  std::vector<float> f(static_cast<size_t>(m.Size()));
  b.CopyToHost(m, f.data());
  return std::vector<double>(f.begin(), f.end());
}

void ToDevice(Backend& b, const std::vector<double>& v, MatrixView m) {
  std::vector<float> f(v.begin(), v.end());
  b.CopyFromHost(f.data(), m);
}

}  // namespace

OnlinePreconditioner::OnlinePreconditioner(Backend& backend, const PreconditionerOptions& o)
    : backend_(&backend), options_(o) {
  MAVG_CHECK(o.rank > 0, "ngsgd rank must be positive, got {}", o.rank);
  MAVG_CHECK(o.update_period > 0, "ngsgd update_period must be positive");
  MAVG_CHECK(o.num_samples_history > 0, "ngsgd num_samples_history must be positive");
  MAVG_CHECK(o.alpha >= 0, "ngsgd alpha must be >= 0");
  MAVG_CHECK(o.epsilon > 0 && o.delta > 0, "ngsgd epsilon and delta must be positive");
}

double OnlinePreconditioner::Eta(int64_t n) const {
  return std::min(0.9, 1.0 - std::exp(-static_cast<double>(n) / options_.num_samples_history));
}

void OnlinePreconditioner::ComputeE(const std::vector<double>& d, double beta,
                                    std::vector<double>& e) const {
  e.resize(d.size());
  for (size_t i = 0; i < d.size(); ++i) e[i] = 1.0 / (beta / d[i] + 1.0);
}

void OnlinePreconditioner::PrepareState(int dim) {
  if (dim_ == dim && w_.Rows() > 0) return;
  dim_ = dim;
  rank_ = std::min(options_.rank, dim - 1);
  if (rank_ <= 0) return;
  w_ = Matrix(*backend_, rank_, dim);
  scalars_ = Matrix(*backend_, 1, 2 * (rank_ + 3));
}

void OnlinePreconditioner::InitDefault(int dim) {
  PrepareState(dim);
  const int r = rank_;
  rho_ = options_.epsilon;
  d_.assign(r, options_.epsilon);
  // A special orthonormal start: row i has equal entries in columns i, i + R, i + 2R, ...
  // Then W = E^{1/2} X with e_ii = 1 / (2 + alpha (D + R) / D) for rho = d = epsilon.
  const double e = 1.0 / (2.0 + (dim + r) * options_.alpha / dim);
  std::vector<float> w(static_cast<size_t>(r) * dim, 0.0f);
  for (int i = 0; i < r; ++i) {
    const int count = (dim - i + r - 1) / r;
    for (int c = i; c < dim; c += r) {
      w[static_cast<size_t>(i) * dim + c] = static_cast<float>(std::sqrt(e / count));
    }
  }
  backend_->CopyFromHost(w.data(), w_);
  t_ = 0;
  skipped_ = 0;
}

void OnlinePreconditioner::Init(ConstMatrixView x0) {
  InitDefault(static_cast<int>(x0.cols));
  Matrix copy(*backend_, x0.rows, x0.cols), prod(*backend_, 1, x0.rows);
  for (int i = 0; i < kInitIterations; ++i) {
    backend_->Copy(x0, copy);
    PreconditionInternal(copy, prod, /*update=*/true);
  }
  t_ = 0;
  skipped_ = 0;
}

float OnlinePreconditioner::Precondition(MatrixView x, MatrixView row_products) {
  MAVG_CHECK(row_products.rows == 1 && row_products.cols == x.rows,
             "Precondition: row products are {}x{}, need 1x{}", row_products.rows,
             row_products.cols, x.rows);
  if (x.cols == 1) {  // one dimension: preconditioning is the identity
    backend_->RowSumSquares(x, row_products);
    return 1.0f;
  }
  if (t_ < 0) Init(x);
  MAVG_CHECK(x.cols == dim_, "Precondition: {} columns, the preconditioner has {}", x.cols, dim_);
  const bool update = t_ < kInitialUpdates || skipped_ >= options_.update_period - 1;
  const float gamma = PreconditionInternal(x, row_products, update);
  skipped_ = update ? 0 : skipped_ + 1;
  return gamma;
}

float OnlinePreconditioner::PreconditionInternal(MatrixView x, MatrixView row_products,
                                                 bool update) {
  Backend& b = *backend_;
  const int64_t n = x.rows;
  const int d = dim_, r = rank_;
  const double eta = Eta(n);
  if (h_.Rows() < n || h_.Cols() != r) h_ = Matrix(b, n, r);
  MatrixView h = h_.View().RowRange(0, n);
  b.Gemm(false, true, 1.0f, x, w_, 0.0f, h);  // H = R W^T

  auto finish_p = [&](double* tr_p) {
    b.Gemm(false, false, -1.0f, h, w_, 1.0f, x);  // P = R - H W
    b.RowSumSquares(x, row_products);
    std::vector<float> p(static_cast<size_t>(n));
    b.CopyToHost(row_products, p.data());
    *tr_p = std::accumulate(p.begin(), p.end(), 0.0);
  };

  if (!update) {
    const double tr_rr = b.SumSquares(x);
    double tr_pp = 0.0;
    finish_p(&tr_pp);
    return tr_pp == 0.0 ? 1.0f : static_cast<float>(std::sqrt(tr_rr / tr_pp));
  }

  if (j_.Rows() != r || j_.Cols() != d) j_ = Matrix(b, r, d);
  if (small_.Rows() != r) small_ = Matrix(b, r, r), small2_ = Matrix(b, r, r);
  b.Gemm(true, false, 1.0f, h, x, 0.0f, j_);        // J = H^T R
  b.Gemm(false, true, 1.0f, j_, j_, 0.0f, small_);  // K = J J^T
  b.Gemm(true, false, 1.0f, h, h, 0.0f, small2_);   // L = H^T H
  const std::vector<double> k = ToHostDouble(b, small_), l = ToHostDouble(b, small2_);

  const double sum_d = std::accumulate(d_.begin(), d_.end(), 0.0);
  const double beta = rho_ * (1.0 + options_.alpha) + options_.alpha * sum_d / d;
  std::vector<double> e;
  ComputeE(d_, beta, e);

  // Z = (eta/N)^2 E^-1/2 K E^-1/2 + (eta/N)(1-eta) [E^-1/2 L E^-1/2 (D+rho I) + transpose]
  //     + (1-eta)^2 (D+rho I)^2, in double (it grows with the fourth power of the data).
  const double eta_n = eta / static_cast<double>(n), eta1 = 1.0 - eta;
  Eigen::MatrixXd z(r, r);
  for (int i = 0; i < r; ++i) {
    const double ie = 1.0 / std::sqrt(e[i]), dr_i = d_[i] + rho_;
    for (int jj = 0; jj < r; ++jj) {
      const double je = 1.0 / std::sqrt(e[jj]), dr_j = d_[jj] + rho_;
      const double lij = 0.5 * (l[i * r + jj] + l[jj * r + i]);
      const double kij = 0.5 * (k[i * r + jj] + k[jj * r + i]);
      z(i, jj) = eta_n * eta_n * ie * kij * je + eta_n * eta1 * ie * lij * je * dr_j +
                 eta_n * eta1 * dr_i * ie * lij * je + (i == jj ? eta1 * eta1 * dr_i * dr_i : 0.0);
    }
  }
  const double z_scale = std::max(1.0, z.trace());
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(z / z_scale);
  MAVG_CHECK(eig.info() == Eigen::Success, "NG-SGD: eigendecomposition failed");
  // Eigen sorts ascending: take them in descending order.
  std::vector<double> c(r);
  Eigen::MatrixXd u(r, r);
  for (int i = 0; i < r; ++i) {
    c[i] = eig.eigenvalues()(r - 1 - i) * z_scale;
    u.col(i) = eig.eigenvectors().col(r - 1 - i);
  }
  bool reorthogonalize = c[0] > kConditionThreshold * c[r - 1];
  const double c_floor = std::pow(rho_ * eta1, 2);
  for (double& ci : c) {
    if (ci < c_floor) ci = c_floor, reorthogonalize = true;
  }

  double tr_pp = 0.0;
  finish_p(&tr_pp);
  double tr_rr = tr_pp;  // tr(R R^T) = tr(P P^T) + sum_i L_ii (2 - e_i)
  for (int i = 0; i < r; ++i) tr_rr += l[i * r + i] * (2.0 - e[i]);
  const float gamma = tr_pp == 0.0 ? 1.0f : static_cast<float>(std::sqrt(tr_rr / tr_pp));

  std::vector<double> sqrt_c(r);
  for (int i = 0; i < r; ++i) sqrt_c[i] = std::sqrt(c[i]);
  const double sum_sqrt_c = std::accumulate(sqrt_c.begin(), sqrt_c.end(), 0.0);
  double rho1 = (eta_n * tr_rr + eta1 * (d * rho_ + sum_d) - sum_sqrt_c) / (d - r);
  std::vector<double> d1(r);
  for (int i = 0; i < r; ++i) d1[i] = sqrt_c[i] - rho1;
  const double floor =
      std::max(options_.epsilon, options_.delta * *std::max_element(sqrt_c.begin(), sqrt_c.end()));
  rho1 = std::max(rho1, floor);
  for (double& v : d1) v = std::max(v, floor);

  // W_{t+1} = A B, B = J + ((1-eta)/(eta/N)) (D_t + rho_t I) W_t,
  // A = (eta/N) E_{t+1}^{1/2} C^{-1/2} U^T E_t^{-1/2}.
  const double sum_d1 = std::accumulate(d1.begin(), d1.end(), 0.0);
  const double beta1 = rho1 * (1.0 + options_.alpha) + options_.alpha * sum_d1 / d;
  std::vector<double> e1;
  ComputeE(d1, beta1, e1);
  if (coef_.Cols() != r) coef_ = Matrix(b, 1, r);
  std::vector<double> coef(r);
  for (int i = 0; i < r; ++i) coef[i] = eta1 / eta_n * (d_[i] + rho_);
  ToDevice(b, coef, coef_);
  b.MulRowsAdd(coef_, w_, 1.0f, j_);  // J becomes B
  std::vector<double> a(static_cast<size_t>(r) * r);
  for (int i = 0; i < r; ++i) {
    const double fi = eta_n * std::sqrt(e1[i]) / sqrt_c[i];
    for (int jj = 0; jj < r; ++jj) a[i * r + jj] = fi * u(jj, i) / std::sqrt(e[jj]);
  }
  ToDevice(b, a, small_);
  if (w1_.Rows() != r || w1_.Cols() != d) w1_ = Matrix(b, r, d);
  b.Gemm(false, false, 1.0f, small_, j_, 0.0f, w1_);

  if (reorthogonalize) {
    // O = E^{-1/2} W W^T E^{-1/2} should be the identity; if not, W <- E^{1/2} C^{-1} E^{-1/2} W
    // with O = C C^T (Cholesky).
    b.Gemm(false, true, 1.0f, w1_, w1_, 0.0f, small_);
    const std::vector<double> o = ToHostDouble(b, small_);
    Eigen::MatrixXd om(r, r);
    double worst = 0.0;
    for (int i = 0; i < r; ++i) {
      for (int jj = 0; jj < r; ++jj) {
        om(i, jj) = o[i * r + jj] / std::sqrt(e1[i] * e1[jj]);
        worst = std::max(worst, std::fabs(om(i, jj) - (i == jj ? 1.0 : 0.0)));
      }
    }
    if (worst > kOrthogonalityThreshold) {
      Eigen::LLT<Eigen::MatrixXd> llt(0.5 * (om + om.transpose()));
      std::vector<double> m(static_cast<size_t>(r) * r, 0.0);
      if (llt.info() == Eigen::Success) {
        const Eigen::MatrixXd cinv = llt.matrixL().solve(Eigen::MatrixXd::Identity(r, r));
        for (int i = 0; i < r; ++i) {
          for (int jj = 0; jj <= i; ++jj) {
            m[i * r + jj] = std::sqrt(e1[i]) * cinv(i, jj) / std::sqrt(e1[jj]);
          }
        }
        ToDevice(b, m, small2_);
        b.Copy(w1_, j_);
        b.Gemm(false, false, 1.0f, small2_, j_, 0.0f, w1_);
      } else {  // should not happen; restart from an orthonormal [I 0] basis
        std::vector<float> w(static_cast<size_t>(r) * d, 0.0f);
        for (int i = 0; i < r; ++i)
          w[static_cast<size_t>(i) * d + i] = static_cast<float>(std::sqrt(e1[i]));
        b.CopyFromHost(w.data(), w1_);
      }
    }
  }
  std::swap(w_, w1_);
  d_ = std::move(d1);
  rho_ = rho1;
  ++t_;
  return gamma;
}

std::vector<double> OnlinePreconditioner::OrthonormalBasis() {
  MAVG_CHECK(t_ >= 0, "the preconditioner is not initialised");
  const double sum_d = std::accumulate(d_.begin(), d_.end(), 0.0);
  const double beta = rho_ * (1.0 + options_.alpha) + options_.alpha * sum_d / dim_;
  std::vector<double> e;
  ComputeE(d_, beta, e);
  std::vector<double> w = ToHostDouble(*backend_, w_);
  for (int i = 0; i < rank_; ++i) {
    for (int c = 0; c < dim_; ++c) w[static_cast<size_t>(i) * dim_ + c] /= std::sqrt(e[i]);
  }
  return w;
}

void OnlinePreconditioner::SyncScalarsToState() {
  std::vector<double> s(d_);
  s.resize(rank_, 0.0);
  s.push_back(rho_);
  s.push_back(static_cast<double>(t_));
  s.push_back(static_cast<double>(skipped_));
  std::vector<float> f(2 * s.size());
  std::memcpy(f.data(), s.data(), s.size() * sizeof(double));
  backend_->CopyFromHost(f.data(), scalars_);
}

void OnlinePreconditioner::SyncScalarsFromState() {
  std::vector<float> f(static_cast<size_t>(scalars_.Cols()));
  backend_->CopyToHost(scalars_, f.data());
  std::vector<double> s(f.size() / 2);
  std::memcpy(s.data(), f.data(), s.size() * sizeof(double));
  d_.assign(s.begin(), s.begin() + rank_);
  rho_ = s[rank_];
  t_ = static_cast<int64_t>(s[rank_ + 1]);
  skipped_ = static_cast<int>(s[rank_ + 2]);
}

std::vector<MatrixView> OnlinePreconditioner::State() {
  if (rank_ <= 0) return {};
  SyncScalarsToState();
  return {w_.View(), scalars_.View()};
}

}  // namespace mavg
