// NG-SGD's small dense steps (backend/ngsgd_small.h): the parallel-order Jacobi
// eigendecomposition against Eigen, the reorthogonalisation against its definition, the step
// against its closed form, and every task run with its parallel phases in reverse order, which
// must change nothing (a phase whose items depended on each other would differ).
#include "engine/backend/ngsgd_small.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <deque>
#include <vector>

#include "engine/core/rng.h"

namespace mavg {
namespace {

// A block that runs each phase's items in reverse order (sums in the usual order, so results
// are comparable bit for bit).
struct ReverseBlock : SerialBlock {
  template <typename F>
  void For(int64_t n, F f) {
    for (int64_t i = n - 1; i >= 0; --i) f(i);
  }
};

std::vector<double> RandomSymmetric(int r, uint64_t seed, double spread) {
  Rng rng(seed);
  Eigen::MatrixXd q = Eigen::MatrixXd::Random(r, r);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) q(i, j) = rng.Gaussian();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(q);
  const Eigen::MatrixXd o = qr.householderQ();
  Eigen::VectorXd ev(r);
  for (int i = 0; i < r; ++i)
    ev(i) = std::pow(spread, -static_cast<double>(i) / std::max(1, r - 1));
  if (r > 4) ev(2) = ev(3);  // a repeated eigenvalue
  const Eigen::MatrixXd a = o * ev.asDiagonal() * o.transpose();
  std::vector<double> out(static_cast<size_t>(r) * r);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) out[i * r + j] = 0.5 * (a(i, j) + a(j, i));
  return out;
}

TEST(NgsgdSmall, RoundRobinMeetsEveryPairOnceWithDisjointPairsPerStep) {
  for (int m : {2, 4, 8, 42}) {
    std::vector<int> met(m * m, 0);
    for (int s = 0; s < m - 1; ++s) {
      std::vector<int> used(m, 0);
      for (int k = 0; k < m / 2; ++k) {
        int p = 0, q = 0;
        ngsgd_small::RoundRobinPair(m, s, k, &p, &q);
        ASSERT_NE(p, q);
        ++used[p], ++used[q];
        ++met[std::min(p, q) * m + std::max(p, q)];
      }
      for (int u : used) EXPECT_EQ(u, 1) << "step " << s << " of " << m;
    }
    for (int p = 0; p < m; ++p)
      for (int q = p + 1; q < m; ++q) EXPECT_EQ(met[p * m + q], 1) << p << "," << q;
  }
}

TEST(NgsgdSmall, JacobiEigenMatchesEigenAndReconstructs) {
  for (int r : {1, 2, 3, 7, 20, 41, 80}) {
    for (double spread : {10.0, 1e8}) {
      const std::vector<double> a0 = RandomSymmetric(r, 100 + r, spread);
      std::vector<double> a = a0, v(a0.size()), rot(4 * r + 4), c(r), u(a0.size()), perm(r);
      SerialBlock b;
      ngsgd_small::JacobiEigen(b, a.data(), v.data(), rot.data(), r);
      ngsgd_small::SortEigen(b, a.data(), v.data(), c.data(), u.data(), perm.data(), r);
      Eigen::MatrixXd m(r, r);
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < r; ++j) m(i, j) = a0[i * r + j];
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(m);
      for (int i = 0; i < r; ++i) {
        EXPECT_NEAR(c[i], eig.eigenvalues()(r - 1 - i), 1e-12 * eig.eigenvalues()(r - 1))
            << "r " << r << " eigenvalue " << i;
        if (i > 0) {
          EXPECT_GE(c[i - 1], c[i]);
        }
      }
      // U diag(c) U^T = A and U^T U = I.
      double worst = 0.0, worst_orth = 0.0;
      for (int i = 0; i < r; ++i) {
        for (int j = 0; j < r; ++j) {
          double s = 0.0, o = 0.0;
          for (int k = 0; k < r; ++k) s += u[i * r + k] * c[k] * u[j * r + k];
          for (int k = 0; k < r; ++k) o += u[k * r + i] * u[k * r + j];
          worst = std::max(worst, std::fabs(s - a0[i * r + j]));
          worst_orth = std::max(worst_orth, std::fabs(o - (i == j ? 1.0 : 0.0)));
        }
      }
      EXPECT_LT(worst, 1e-12) << "r " << r;
      EXPECT_LT(worst_orth, 1e-12) << "r " << r;
    }
  }
}

// The Jacobi step as three phases (rotations; all rows, a <- J^T a; all columns, a <- a J and
// v <- v J), the way it was written before the rows and columns were fused into 2 x 2 blocks.
void ThreePhaseJacobi(double* a, double* v, double* rot, int r) {
  const int m = r + (r % 2), pairs = m / 2;
  for (int64_t i = 0; i < static_cast<int64_t>(r) * r; ++i) v[i] = i / r == i % r ? 1.0 : 0.0;
  for (int sweep = 0; sweep < ngsgd_small::kMaxSweeps; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (int64_t i = 0; i < static_cast<int64_t>(r) * r; ++i)
      off += i / r == i % r ? 0.0 : a[i] * a[i];
    for (int64_t i = 0; i < r; ++i) diag += a[i * r + i] * a[i * r + i];
    if (off <= 1e-28 * (diag + off) || off == 0.0) break;
    for (int s = 0; s < m - 1; ++s) {
      for (int k = 0; k < pairs; ++k) {
        int p = 0, q = 0;
        ngsgd_small::RoundRobinPair(m, s, k, &p, &q);
        double c = 1.0, sn = 0.0;
        if (p < r && q < r && a[p * r + q] != 0.0) {
          const double apq = a[p * r + q];
          const double theta = (a[q * r + q] - a[p * r + p]) / (2.0 * apq);
          const double t =
              (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
          c = 1.0 / std::sqrt(t * t + 1.0);
          sn = t * c;
        }
        rot[4 * k] = p, rot[4 * k + 1] = q, rot[4 * k + 2] = c, rot[4 * k + 3] = sn;
      }
      for (int64_t idx = 0; idx < static_cast<int64_t>(pairs) * r; ++idx) {
        const int64_t j = idx % r;
        ngsgd_small::ApplyRotation(rot + 4 * (idx / r), r,
                                   [&](int64_t p, int64_t q, double c, double sn) {
                                     ngsgd_small::Rotate(a + p * r + j, a + q * r + j, c, sn);
                                   });
      }
      for (int64_t idx = 0; idx < static_cast<int64_t>(pairs) * r; ++idx) {
        const int64_t i = idx % r;
        ngsgd_small::ApplyRotation(rot + 4 * (idx / r), r,
                                   [&](int64_t p, int64_t q, double c, double sn) {
                                     ngsgd_small::Rotate(a + i * r + p, a + i * r + q, c, sn);
                                     ngsgd_small::Rotate(v + i * r + p, v + i * r + q, c, sn);
                                   });
      }
    }
  }
}

TEST(NgsgdSmall, JacobiStepsByBlocksAreTheThreePhaseStepsBitForBit) {
  for (int r : {1, 2, 3, 7, 20, 41}) {
    const std::vector<double> a0 = RandomSymmetric(r, 300 + r, 1e4);
    std::vector<double> a = a0, v(a0.size()), rot(4 * r + 4);
    std::vector<double> ref_a = a0, ref_v(a0.size()), ref_rot(4 * r + 4);
    SerialBlock b;
    ngsgd_small::JacobiEigen(b, a.data(), v.data(), rot.data(), r);
    ThreePhaseJacobi(ref_a.data(), ref_v.data(), ref_rot.data(), r);
    EXPECT_EQ(a, ref_a) << "r " << r;
    EXPECT_EQ(v, ref_v) << "r " << r;
  }
}

// Inputs of a subspace update: K, L from random H and J, as PreconditionInternal forms them.
struct SubspaceCase {
  int r, dim;
  int64_t n;
  std::vector<float> k, l, row_b, coef, matrix, row_a;
  std::vector<double> state, work;
  float gamma = 0.0f;
  SubspaceCase(int r_, int dim_, int64_t n_, uint64_t seed) : r(r_), dim(dim_), n(n_) {
    Rng rng(seed);
    Eigen::MatrixXd h(n, r), j(r, dim);
    for (int64_t i = 0; i < n; ++i)
      for (int c = 0; c < r; ++c) h(i, c) = rng.Gaussian() * 0.1;
    for (int i = 0; i < r; ++i)
      for (int c = 0; c < dim; ++c) j(i, c) = rng.Gaussian() * 0.1;
    const Eigen::MatrixXd kk = j * j.transpose(), ll = h.transpose() * h;
    for (int i = 0; i < r; ++i)
      for (int c = 0; c < r; ++c) k.push_back(kk(i, c)), l.push_back(ll(i, c));
    for (int64_t i = 0; i < n; ++i) row_b.push_back(static_cast<float>(1.0 + rng.Uniform()));
    for (int64_t i = 0; i < n; ++i) row_a.push_back(static_cast<float>(2.0 + rng.Uniform()));
    for (int i = 0; i < r; ++i) state.push_back(1e-3 * (r - i));
    state.push_back(1e-4);
    coef.resize(r);
    matrix.resize(static_cast<size_t>(r) * r);
    work.resize(static_cast<size_t>(NgsgdSmallWorkDoubles(r)));
  }
  NgsgdSmallTask Task(NgsgdSmallKind kind) {
    NgsgdSmallTask t;
    t.kind = kind;
    t.rank = r;
    t.dim = dim;
    t.rows = n;
    t.eta = 1.0 - std::exp(-static_cast<double>(n) / 2000.0);
    t.k = k.data();
    t.l = l.data();
    t.row_a = row_a.data();
    t.row_b = row_b.data();
    t.state = state.data();
    t.work = work.data();
    t.coef = coef.data();
    t.matrix = matrix.data();
    t.gamma = &gamma;
    return t;
  }
};

// A subspace update, then a reorthogonalisation (due, of a basis far from orthonormal).
struct SubspaceRun {
  SubspaceCase c;
  std::vector<float> a;  // kSubspace's matrix output
};
template <typename Block>
SubspaceRun RunSubspaceAndReorth(int r, int dim) {
  SubspaceRun run{SubspaceCase(r, dim, 64, 7), {}};
  SubspaceCase& c = run.c;
  Block b;
  RunNgsgdSmallTask(b, c.Task(NgsgdSmallKind::kSubspace));
  run.a = c.matrix;
  std::vector<float> o(static_cast<size_t>(r) * r);
  for (int i = 0; i < r; ++i) o[i * r + i] = 1.5f;
  for (int i = 0; i + 1 < r; ++i) o[i * r + i + 1] = o[(i + 1) * r + i] = 0.2f;
  ngsgd_small::Work(c.work.data(), r).flags[0] = 1.0;
  NgsgdSmallTask t = c.Task(NgsgdSmallKind::kReorthogonalize);
  t.l = o.data();
  RunNgsgdSmallTask(b, t);
  return run;
}

TEST(NgsgdSmall, EveryTaskIsIndependentOfTheOrderOfItsParallelItems) {
  for (int r : {5, 20}) {
    const SubspaceRun s = RunSubspaceAndReorth<SerialBlock>(r, 300);
    const SubspaceRun v = RunSubspaceAndReorth<ReverseBlock>(r, 300);
    EXPECT_EQ(s.c.state, v.c.state);
    EXPECT_EQ(s.c.coef, v.c.coef);
    EXPECT_EQ(s.a, v.a) << "A";
    EXPECT_EQ(s.c.matrix, v.c.matrix) << "M";
    EXPECT_EQ(s.c.gamma, v.c.gamma);
    EXPECT_EQ(s.c.work, v.c.work);
    // The reorthogonalisation did something.
    EXPECT_NE(s.c.matrix[0], 1.0f);
  }
}

// A block with fast memory (a GPU block's shared memory), here a host array of its own.
struct FastMemoryBlock : SerialBlock {
  std::vector<double> fast = std::vector<double>(static_cast<size_t>(NgsgdSmallFastDoubles(20)));
  double* FastMemory(int64_t n) {
    return n <= static_cast<int64_t>(fast.size()) ? fast.data() : nullptr;
  }
};

TEST(NgsgdSmall, TasksGiveTheSameBitsWithTheirWorkingMatricesInFastMemory) {
  for (int r : {5, 20}) {
    const SubspaceRun s = RunSubspaceAndReorth<SerialBlock>(r, 300);
    const SubspaceRun f = RunSubspaceAndReorth<FastMemoryBlock>(r, 300);
    EXPECT_EQ(s.c.state, f.c.state);
    EXPECT_EQ(s.c.coef, f.c.coef);
    EXPECT_EQ(s.a, f.a) << "A";
    EXPECT_EQ(s.c.matrix, f.c.matrix) << "M";
    EXPECT_EQ(s.c.gamma, f.c.gamma);
    // What the reorthogonalisation reads of the subspace step's work: d's E_{t+1}, the flag.
    ngsgd_small::Work ws(const_cast<double*>(s.c.work.data()), r);
    ngsgd_small::Work wf(const_cast<double*>(f.c.work.data()), r);
    EXPECT_EQ(std::vector<double>(ws.e1, ws.e1 + r), std::vector<double>(wf.e1, wf.e1 + r));
    EXPECT_EQ(ws.flags[0], wf.flags[0]);
  }
  // Too little fast memory for the rank: the work buffer, as without any.
  const SubspaceRun s = RunSubspaceAndReorth<SerialBlock>(21, 300);
  const SubspaceRun f = RunSubspaceAndReorth<FastMemoryBlock>(21, 300);
  EXPECT_EQ(s.c.work, f.c.work);
  EXPECT_EQ(s.c.matrix, f.c.matrix);
}

// A block of a batch's grid on the host: items in reverse order, and fast memory of the
// launch's size (NgsgdSmallBatchFastDoubles), its own.
struct GridBlock : ReverseBlock {
  std::vector<double> fast;
  double* FastMemory(int64_t n) {
    return n <= static_cast<int64_t>(fast.size()) ? fast.data() : nullptr;
  }
};

// The tasks of one batch: the subspace steps of preconditioners of several ranks, then (the
// next batch) their reorthogonalisations, beside a gamma and a step of their own memory.
struct BatchCase {
  std::deque<SubspaceCase> cases;
  std::vector<std::vector<float>> o;  // [case] O of the reorthogonalisation (far from I)
  std::vector<std::vector<float>> a;  // [case] kSubspace's matrix output
  std::vector<float> row_a = {1, 4, 9}, row_b = {1, 1, 2};
  float gamma = 0, g_in = 2.0f, g_out = 0.5f, neg_step = 0;
  double limited = 0;
  explicit BatchCase(const std::vector<int>& ranks) {
    for (size_t i = 0; i < ranks.size(); ++i) {
      const int r = ranks[i];
      cases.emplace_back(r, 300, 64, 11 + i);
      std::vector<float> oi(static_cast<size_t>(r) * r);
      for (int j = 0; j < r; ++j) oi[j * r + j] = 1.5f;
      for (int j = 0; j + 1 < r; ++j) oi[j * r + j + 1] = oi[(j + 1) * r + j] = 0.2f;
      o.push_back(oi);
    }
  }
  std::vector<NgsgdSmallTask> Subspaces() {
    std::vector<NgsgdSmallTask> t;
    for (SubspaceCase& c : cases) t.push_back(c.Task(NgsgdSmallKind::kSubspace));
    NgsgdSmallTask g;
    g.kind = NgsgdSmallKind::kGamma;
    g.rows = 3;
    g.row_a = row_a.data();
    g.row_b = row_b.data();
    g.gamma = &gamma;
    t.push_back(g);
    NgsgdSmallTask s = g;
    s.kind = NgsgdSmallKind::kStep;
    s.lr = 0.1;
    s.max_change = 0.1;
    s.gamma = nullptr;
    s.gamma_in = &g_in;
    s.gamma_out = &g_out;
    s.neg_step = &neg_step;
    s.limited = &limited;
    t.push_back(s);
    return t;
  }
  std::vector<NgsgdSmallTask> Reorthogonalizations() {
    std::vector<NgsgdSmallTask> t;
    for (size_t i = 0; i < cases.size(); ++i) {
      SubspaceCase& c = cases[i];
      a.push_back(c.matrix);
      ngsgd_small::Work(c.work.data(), c.r).flags[0] = 1.0;
      NgsgdSmallTask task = c.Task(NgsgdSmallKind::kReorthogonalize);
      task.l = o[i].data();
      t.push_back(task);
    }
    return t;
  }
};

// Runs the batch as a device would, a block each (here in reverse order of the blocks), with
// the fast memory the launch gives when the device allows `available` doubles per block.
void RunGrid(const std::vector<NgsgdSmallTask>& tasks, int64_t available) {
  const NgsgdSmallBatch batch = MakeNgsgdSmallBatch(tasks.data(), static_cast<int>(tasks.size()));
  ASSERT_EQ(batch.count, static_cast<int>(tasks.size()));
  const int64_t fast = NgsgdSmallBatchFastDoubles(batch, available);
  for (int block = batch.count - 1; block >= 0; --block) {
    GridBlock b;
    b.fast.resize(static_cast<size_t>(fast));
    RunNgsgdSmallBatchTask(b, batch, block);
  }
}

TEST(NgsgdSmall, ABatchsGridGivesEveryTaskTheBitsItGivesAlone) {
  const std::vector<int> ranks = {5, 20, 21, 3, 1};
  BatchCase alone(ranks), grid(ranks);
  SerialBlock b;
  for (const NgsgdSmallTask& t : alone.Subspaces()) RunNgsgdSmallTask(b, t);
  for (const NgsgdSmallTask& t : alone.Reorthogonalizations()) RunNgsgdSmallTask(b, t);
  // Fast memory for rank 20: the rank-21 task runs from its work buffer.
  const int64_t available = NgsgdSmallFastDoubles(20);
  RunGrid(grid.Subspaces(), available);
  RunGrid(grid.Reorthogonalizations(), available);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const SubspaceCase &s = alone.cases[i], &g = grid.cases[i];
    const int r = s.r;
    EXPECT_EQ(s.state, g.state) << "rank " << r;
    EXPECT_EQ(s.coef, g.coef) << "rank " << r;
    EXPECT_EQ(alone.a[i], grid.a[i]) << "A, rank " << r;
    EXPECT_EQ(s.matrix, g.matrix) << "M, rank " << r;
    EXPECT_EQ(s.gamma, g.gamma) << "rank " << r;
    ngsgd_small::Work ws(const_cast<double*>(s.work.data()), r);
    ngsgd_small::Work wg(const_cast<double*>(g.work.data()), r);
    EXPECT_EQ(std::vector<double>(ws.e1, ws.e1 + r), std::vector<double>(wg.e1, wg.e1 + r));
    EXPECT_EQ(ws.flags[0], wg.flags[0]);
  }
  EXPECT_EQ(alone.gamma, grid.gamma);
  EXPECT_EQ(alone.neg_step, grid.neg_step);
  EXPECT_EQ(alone.limited, grid.limited);
  EXPECT_NE(grid.cases[1].matrix[0], 1.0f);  // the reorthogonalisation did something
}

TEST(NgsgdSmall, ABatchsLaunchGetsTheFastMemoryOfItsLargestTaskThatFits) {
  std::vector<NgsgdSmallTask> tasks(3);
  tasks[0].kind = NgsgdSmallKind::kSubspace, tasks[0].rank = 20;
  tasks[1].kind = NgsgdSmallKind::kReorthogonalize, tasks[1].rank = 80;
  tasks[2].kind = NgsgdSmallKind::kStep, tasks[2].rank = 200;  // uses none
  const NgsgdSmallBatch batch = MakeNgsgdSmallBatch(tasks.data(), 3);
  EXPECT_EQ(NgsgdSmallBatchFastDoubles(batch, NgsgdSmallFastDoubles(80)),
            NgsgdSmallFastDoubles(80));
  EXPECT_EQ(NgsgdSmallBatchFastDoubles(batch, NgsgdSmallFastDoubles(80) - 1),
            NgsgdSmallFastDoubles(20));
  EXPECT_EQ(NgsgdSmallBatchFastDoubles(batch, 0), 0);
  // More tasks than a launch takes: the first kMaxTasks (the launcher makes several).
  std::vector<NgsgdSmallTask> many(NgsgdSmallBatch::kMaxTasks + 3);
  for (size_t i = 0; i < many.size(); ++i) many[i].rows = static_cast<int64_t>(i);
  const NgsgdSmallBatch first = MakeNgsgdSmallBatch(many.data(), static_cast<int>(many.size()));
  EXPECT_EQ(first.count, NgsgdSmallBatch::kMaxTasks);
  EXPECT_EQ(first.tasks[NgsgdSmallBatch::kMaxTasks - 1].rows, NgsgdSmallBatch::kMaxTasks - 1);
  const NgsgdSmallBatch rest = MakeNgsgdSmallBatch(many.data() + NgsgdSmallBatch::kMaxTasks, 3);
  EXPECT_EQ(rest.count, 3);
  EXPECT_EQ(rest.tasks[2].rows, NgsgdSmallBatch::kMaxTasks + 2);
}

TEST(NgsgdSmall, SubspaceUpdateKeepsItsInvariants) {
  SubspaceCase c(20, 300, 64, 9);
  SerialBlock b;
  const std::vector<double> before = c.state;
  RunNgsgdSmallTask(b, c.Task(NgsgdSmallKind::kSubspace));
  // d sorted descending (it comes from sorted eigenvalues), all floored above 0, rho too.
  for (int i = 0; i < 20; ++i) {
    EXPECT_GT(c.state[i], 0.0);
    if (i > 0) {
      EXPECT_GE(c.state[i - 1], c.state[i]);
    }
  }
  EXPECT_GT(c.state[20], 0.0);
  // gamma from the traces: tr(R R^T) = tr(P P^T) + sum_i L_ii (2 - e_i) with 0 < e_i < 1, so
  // gamma^2 lies between 1 + sum L_ii / tr_pp and 1 + 2 sum L_ii / tr_pp.
  double tr_pp = 0.0, tr_l = 0.0;
  for (float v : c.row_b) tr_pp += v;
  for (int i = 0; i < 20; ++i) tr_l += c.l[i * 20 + i];
  const double g2 = static_cast<double>(c.gamma) * c.gamma;
  EXPECT_GT(g2, 1.0 + tr_l / tr_pp - 1e-5);
  EXPECT_LT(g2, 1.0 + 2.0 * tr_l / tr_pp + 1e-5);
  // coef_i = (1 - eta) / (eta / N) (d_i + rho) of the state before.
  const double eta = 1.0 - std::exp(-64.0 / 2000.0);
  for (int i = 0; i < 20; ++i) {
    EXPECT_NEAR(c.coef[i], (1 - eta) / (eta / 64) * (before[i] + before[20]), 1e-5 * c.coef[i]);
  }
}

TEST(NgsgdSmall, ReorthogonalizationMakesTheBasisOrthonormal) {
  const int r = 6, dim = 40;
  SubspaceCase c(r, dim, 64, 11);
  SerialBlock b;
  RunNgsgdSmallTask(b, c.Task(NgsgdSmallKind::kSubspace));
  ngsgd_small::Work w(c.work.data(), r);
  w.flags[0] = 1.0;  // due
  // A basis W = E^{1/2} X with X not orthonormal.
  Rng rng(3);
  Eigen::MatrixXd x(r, dim);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < dim; ++j) x(i, j) = rng.Gaussian() / std::sqrt(dim);
  Eigen::VectorXd e1(r);
  for (int i = 0; i < r; ++i) e1(i) = w.e1[i];
  const Eigen::MatrixXd wm = e1.cwiseSqrt().asDiagonal() * x;
  const Eigen::MatrixXd o = wm * wm.transpose();
  std::vector<float> of;
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) of.push_back(static_cast<float>(o(i, j)));
  NgsgdSmallTask t = c.Task(NgsgdSmallKind::kReorthogonalize);
  t.l = of.data();
  RunNgsgdSmallTask(b, t);
  Eigen::MatrixXd m(r, r);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) m(i, j) = c.matrix[i * r + j];
  const Eigen::MatrixXd w2 = m * wm;
  const Eigen::MatrixXd x2 = e1.cwiseSqrt().cwiseInverse().asDiagonal() * w2;
  EXPECT_LT((x2 * x2.transpose() - Eigen::MatrixXd::Identity(r, r)).cwiseAbs().maxCoeff(), 1e-5);
  // Not due: M = I.
  w.flags[0] = 0.0;
  RunNgsgdSmallTask(b, t);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) EXPECT_EQ(c.matrix[i * r + j], i == j ? 1.0f : 0.0f);
}

TEST(NgsgdSmall, GammaAndStepAreTheirClosedForms) {
  std::vector<float> a = {1, 4, 9}, p = {1, 1, 2};
  float gamma = 0, g_in = 2.0f, g_out = 0.5f, neg_step = 0;
  double limited = 0;
  NgsgdSmallTask t;
  t.kind = NgsgdSmallKind::kGamma;
  t.rows = 3;
  t.row_a = a.data();
  t.row_b = p.data();
  t.gamma = &gamma;
  SerialBlock b;
  RunNgsgdSmallTask(b, t);
  EXPECT_FLOAT_EQ(gamma, std::sqrt(14.0f / 4.0f));
  t.kind = NgsgdSmallKind::kStep;
  t.lr = 0.1;
  t.max_change_lr = 0.1;  // nnet2: the limit is measured with the lr
  t.gamma_in = &g_in;
  t.gamma_out = &g_out;
  t.neg_step = &neg_step;
  t.limited = &limited;
  // sum sqrt(a p) = 1 + 2 + sqrt(18); tot = lr s sum with s = 1.
  const double tot = 0.1 * (3.0 + std::sqrt(18.0));
  t.max_change = 2 * tot;
  RunNgsgdSmallTask(b, t);
  EXPECT_FLOAT_EQ(neg_step, -0.1f);
  EXPECT_EQ(limited, 0.0);
  t.max_change = tot / 4;
  RunNgsgdSmallTask(b, t);
  EXPECT_FLOAT_EQ(neg_step, static_cast<float>(-0.1 / 4));
  EXPECT_EQ(limited, 1.0);
  t.max_change = 0.0;  // no limit
  RunNgsgdSmallTask(b, t);
  EXPECT_FLOAT_EQ(neg_step, -0.1f);
  EXPECT_EQ(limited, 1.0);
  // The fork: measured without the lr (max_change_lr 1), the same limit binds 10x harder:
  // ms = (tot / 4) / (tot / lr) = lr / 4, so the step is lr x lr / 4.
  t.max_change_lr = 1.0;
  t.max_change = tot / 4;
  RunNgsgdSmallTask(b, t);
  EXPECT_FLOAT_EQ(neg_step, static_cast<float>(-0.1 * 0.1 / 4));
  EXPECT_EQ(limited, 2.0);
  t.max_change = 20 * tot;  // above tot / lr = 10 tot: not binding
  RunNgsgdSmallTask(b, t);
  EXPECT_FLOAT_EQ(neg_step, -0.1f);
  EXPECT_EQ(limited, 2.0);
}

}  // namespace
}  // namespace mavg
