#pragma once
// The small dense steps of NG-SGD (docs/algorithms.md §2), written once for every backend and
// run where the data is: by the CPU backend on the host, by the CUDA backend as one block of
// threads, so that a minibatch on a GPU needs no host round trip. Each step ("task") is a
// __host__ __device__ function over a Block policy (backend/block.h). The eigendecomposition is
// JacobiEigen below, or, for a block with kHostEigen, its HostEigen (the CPU backend uses
// Eigen's solver: much faster on one core than Jacobi rotations; both reach double precision).
//
// The tasks:
//   kGamma            gamma = sqrt(sum row_a / sum row_b) (the preconditioner's scale when the
//                     Fisher model is not updated: row_a = |x_i|^2, row_b = |p_i|^2)
//   kSubspace         the R x R part of the Fisher update: Z from K = J J^T and L = H^T H, its
//                     eigendecomposition (cyclic Jacobi in parallel order, in double), the new
//                     d and rho, gamma, and the matrices that form W_{t+1} (coef, A)
//   kReorthogonalize  M with W <- M W making E^{-1/2} W W^T E^{-1/2} the identity again
//                     (Cholesky), or M = I where the basis is still orthonormal
//   kStep             the NG-SGD step: s = gamma_in gamma_out, max-change, neg_step = -lr s ms
#include <math.h>

#include <cstdint>

#include "engine/backend/block.h"
#include "engine/backend/host_device.h"
#include "engine/backend/scale_histogram.h"

namespace mavg {

enum class NgsgdSmallKind { kGamma, kSubspace, kReorthogonalize, kStep };

struct NgsgdSmallTask {
  NgsgdSmallKind kind = NgsgdSmallKind::kGamma;
  int rank = 0;      // R
  int dim = 0;       // D
  int64_t rows = 0;  // N, the minibatch
  // Options (kSubspace): smoothing, floors; the forgetting factor for this N.
  double alpha = 4.0, epsilon = 1e-10, delta = 5e-4, eta = 0.0;
  // kStep: learning rate and max-change limit for the whole minibatch (0: none), and the
  // learning rate the limit is measured with (nnet2: lr; the authors' fork: 1; 0: lr).
  double lr = 0.0, max_change = 0.0, max_change_lr = 0.0;
  // Device (or host, on the CPU) memory; which ones a task reads or writes is listed there.
  const float* row_a = nullptr;     // [N]
  const float* row_b = nullptr;     // [N]
  const float* k = nullptr;         // [R x R] K = J J^T
  const float* l = nullptr;         // [R x R] L = H^T H (also O = W W^T for kReorthogonalize)
  double* state = nullptr;          // [R + 1]: d, then rho (read and updated by kSubspace)
  double* work = nullptr;           // [NgsgdSmallWorkDoubles(R)], kept from kSubspace to kReorth.
  float* coef = nullptr;            // [R] out: (1 - eta) / (eta / N) (d_i + rho)
  float* matrix = nullptr;          // [R x R] out: A (kSubspace) or M (kReorthogonalize)
  float* gamma = nullptr;           // [1] out (kGamma, kSubspace)
  const float* gamma_in = nullptr;  // [1] kStep
  const float* gamma_out = nullptr;
  float* neg_step = nullptr;  // [1] out (kStep): -lr s ms
  double* limited = nullptr;  // [1] kStep: += 1 when max-change scaled the step down
  double* scales = nullptr;   // [kScaleBins] kStep (or null): += 1 in the bin of ms
};

inline int64_t NgsgdSmallWorkDoubles(int r) {
  return 3 * static_cast<int64_t>(r) * r + 8 * static_cast<int64_t>(r) + 16;
}
// The fast memory (Block::FastMemory) kSubspace and kReorthogonalize use when a block has it:
// two R x R matrices and the rotations of a Jacobi step.
MAVG_HOST_DEVICE inline int64_t NgsgdSmallFastDoubles(int r) {
  return 2 * static_cast<int64_t>(r) * r + 2 * static_cast<int64_t>(r) + 4;
}

namespace ngsgd_small {

constexpr double kConditionThreshold = 1e6;
constexpr double kOrthogonalityThreshold = 1e-3;
constexpr int kMaxSweeps = 40;

// Layout of task.work (doubles).
struct Work {
  double *z, *v, *u, *rot, *c, *e, *e1, *flags;
  MAVG_HOST_DEVICE Work(double* w, int r) {
    const int64_t r2 = static_cast<int64_t>(r) * r;
    z = w;
    v = z + r2;
    u = v + r2;
    rot = u + r2;         // [4 * ceil(R/2)]: p, q, cos, sin of each pair of a Jacobi step
    c = rot + 2 * r + 4;  // [R] eigenvalues (sorted, descending) / a permutation while sorting
    e = c + r;            // [R] E_t
    e1 = e + r;           // [R] E_{t+1} (for kReorthogonalize)
    flags = e1 + r;       // [0]: reorthogonalize, [1]: permutation scratch start
  }
};

// The two R x R matrices and the rotations a task works on most: in the block's fast memory
// when it has room (on a GPU, every Jacobi step reads and writes all of Z and V), else the
// work buffer's z, v and rot.
struct HotWork {
  double *m1, *m2, *rot;
};
template <typename Block>
MAVG_HOST_DEVICE HotWork HotWorkOf(Block& b, const Work& w, int r) {
  if (double* f = b.FastMemory(NgsgdSmallFastDoubles(r))) {
    const int64_t r2 = static_cast<int64_t>(r) * r;
    return HotWork{f, f + r2, f + 2 * r2};
  }
  return HotWork{w.z, w.v, w.rot};
}

// Pair k of step s of the round-robin (circle) ordering of m (even) indices: every step pairs
// all indices disjointly, and m - 1 steps meet every pair once.
MAVG_HOST_DEVICE inline void RoundRobinPair(int m, int s, int k, int* p, int* q) {
  auto pos = [m, s](int i) { return i == 0 ? 0 : (i - 1 + s) % (m - 1) + 1; };
  *p = pos(k);
  *q = pos(m - 1 - k);
}

// (x, y) <- (c x - s y, s x + c y).
MAVG_HOST_DEVICE inline void Rotate(double* x, double* y, double c, double s) {
  const double x0 = *x, y0 = *y;
  *x = c * x0 - s * y0;
  *y = s * x0 + c * y0;
}

// f(p, q, cos, sin) for a stored rotation (p, q, c, s), unless it involves the dummy index.
template <typename F>
MAVG_HOST_DEVICE void ApplyRotation(const double* rot, int r, F f) {
  const auto p = static_cast<int64_t>(rot[0]), q = static_cast<int64_t>(rot[1]);
  if (p < r && q < r) f(p, q, rot[2], rot[3]);
}

// Pairs k and l of a Jacobi step applied to their 2 x 2 block of a (rows p_k, q_k; columns
// p_l, q_l): rows first (a <- J^T a), then columns (a <- a J). The block depends only on itself
// and the two rotations, so every block of a step is independent of the others, and each
// element sees the same operations in the same order as a pass over all rows followed by one
// over all columns. A dummy index (>= r) has no row or column.
MAVG_HOST_DEVICE inline void RotateBlock(double* a, int r, const double* rot_k,
                                         const double* rot_l) {
  const auto pk = static_cast<int64_t>(rot_k[0]), qk = static_cast<int64_t>(rot_k[1]);
  const auto pl = static_cast<int64_t>(rot_l[0]), ql = static_cast<int64_t>(rot_l[1]);
  ApplyRotation(rot_k, r, [&](int64_t p, int64_t q, double c, double sn) {
    if (pl < r) Rotate(a + p * r + pl, a + q * r + pl, c, sn);
    if (ql < r) Rotate(a + p * r + ql, a + q * r + ql, c, sn);
  });
  ApplyRotation(rot_l, r, [&](int64_t p, int64_t q, double c, double sn) {
    if (pk < r) Rotate(a + pk * r + p, a + pk * r + q, c, sn);
    if (qk < r) Rotate(a + qk * r + p, a + qk * r + q, c, sn);
  });
}

// Eigendecomposition of the symmetric r x r matrix a (row-major, overwritten: its diagonal
// ends as the eigenvalues) by cyclic Jacobi rotations in parallel order; v receives the
// eigenvectors as columns (a = V diag V^T). Converges to relative 1e-14 of the off-diagonal.
// Each step is two phases: the rotations of its disjoint pairs, then a <- J^T a J by 2 x 2
// blocks together with v <- v J by rows (RotateBlock).
template <typename Block>
MAVG_HOST_DEVICE void JacobiEigen(Block& b, double* a, double* v, double* rot, int r) {
  const int m = r + (r % 2);  // an odd size gets one dummy index r, never rotated
  const int pairs = m / 2;
  const int64_t blocks = static_cast<int64_t>(pairs) * pairs;
  b.For(static_cast<int64_t>(r) * r, [&](int64_t i) { v[i] = i / r == i % r ? 1.0 : 0.0; });
  b.Sync();
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    const double off = b.Sum(static_cast<int64_t>(r) * r,
                             [&](int64_t i) { return i / r == i % r ? 0.0 : a[i] * a[i]; });
    const double diag = b.Sum(r, [&](int64_t i) { return a[i * r + i] * a[i * r + i]; });
    if (off <= 1e-28 * (diag + off) || off == 0.0) break;
    for (int s = 0; s < m - 1; ++s) {
      b.For(pairs, [&](int64_t k) {
        int p = 0, q = 0;
        RoundRobinPair(m, s, static_cast<int>(k), &p, &q);
        double c = 1.0, sn = 0.0;
        if (p < r && q < r) {
          const double apq = a[p * r + q];
          if (apq != 0.0) {
            const double theta = (a[q * r + q] - a[p * r + p]) / (2.0 * apq);
            const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
            c = 1.0 / sqrt(t * t + 1.0);
            sn = t * c;
          }
        }
        rot[4 * k] = p, rot[4 * k + 1] = q, rot[4 * k + 2] = c, rot[4 * k + 3] = sn;
      });
      b.Sync();
      b.For(blocks + static_cast<int64_t>(r) * pairs, [&](int64_t idx) {
        if (idx < blocks) {
          RotateBlock(a, r, rot + 4 * (idx / pairs), rot + 4 * (idx % pairs));
          return;
        }
        const int64_t i = (idx - blocks) / pairs, l = (idx - blocks) % pairs;
        ApplyRotation(rot + 4 * l, r, [&](int64_t p, int64_t q, double c, double sn) {
          Rotate(v + i * r + p, v + i * r + q, c, sn);
        });
      });
      b.Sync();
    }
  }
}

}  // namespace ngsgd_small

namespace ngsgd_small {

// a's eigendecomposition (a's diagonal becomes the eigenvalues, v's columns the eigenvectors).
template <typename Block>
MAVG_HOST_DEVICE void SymmetricEigen(Block& b, double* a, double* v, double* rot, int r) {
  if constexpr (Block::kHostEigen) {
    b.HostEigen(a, v, r);
  } else {
    JacobiEigen(b, a, v, rot, r);
  }
}

// c = the eigenvalues on a's diagonal in descending order, u = v's columns in that order.
template <typename Block>
MAVG_HOST_DEVICE void SortEigen(Block& b, const double* a, const double* v, double* c, double* u,
                                double* perm, int r) {
  b.For(r, [&](int64_t i) {
    const double ai = a[i * r + i];
    int64_t rank = 0;
    for (int64_t j = 0; j < r; ++j) {
      const double aj = a[j * r + j];
      if (aj > ai || (aj == ai && j < i)) ++rank;
    }
    c[rank] = ai;
    perm[rank] = static_cast<double>(i);
  });
  b.Sync();
  b.For(static_cast<int64_t>(r) * r, [&](int64_t idx) {
    const int64_t row = idx / r, col = idx % r;
    u[idx] = v[row * r + static_cast<int64_t>(perm[col])];
  });
  b.Sync();
}

template <typename Block>
MAVG_HOST_DEVICE void Gamma(Block& b, const NgsgdSmallTask& t) {
  const double tr_rr = b.Sum(t.rows, [&](int64_t i) { return static_cast<double>(t.row_a[i]); });
  const double tr_pp = b.Sum(t.rows, [&](int64_t i) { return static_cast<double>(t.row_b[i]); });
  if (b.Leader()) *t.gamma = tr_pp == 0.0 ? 1.0f : static_cast<float>(sqrt(tr_rr / tr_pp));
  b.Sync();
}

template <typename Block>
MAVG_HOST_DEVICE void Subspace(Block& b, const NgsgdSmallTask& t) {
  const int r = t.rank, dim = t.dim;
  const int64_t r2 = static_cast<int64_t>(r) * r;
  Work w(t.work, r);
  const HotWork hot = HotWorkOf(b, w, r);  // Z, V and the rotations of the eigendecomposition
  double* z = hot.m1;
  const double* d = t.state;
  const double rho = t.state[r];
  const double eta_n = t.eta / static_cast<double>(t.rows), eta1 = 1.0 - t.eta;
  const double sum_d = b.Sum(r, [&](int64_t i) { return d[i]; });
  const double beta = rho * (1.0 + t.alpha) + t.alpha * sum_d / dim;
  b.For(r, [&](int64_t i) { w.e[i] = 1.0 / (beta / d[i] + 1.0); });
  b.Sync();

  // Z = (eta/N)^2 E^-1/2 K E^-1/2 + (eta/N)(1-eta) [E^-1/2 L E^-1/2 (D+rho I) + transpose]
  //     + (1-eta)^2 (D+rho I)^2, in double (it grows with the fourth power of the data).
  // The per-index factors once (w.rot is free until the eigendecomposition, and is not hot.rot
  // unless the block has no fast memory): E^-1/2, D + rho I.
  double* inv_sqrt_e = w.rot;
  double* d_rho = w.rot + r;
  b.For(r, [&](int64_t i) {
    inv_sqrt_e[i] = 1.0 / sqrt(w.e[i]);
    d_rho[i] = d[i] + rho;
  });
  b.Sync();
  b.For(r2, [&](int64_t idx) {
    const int64_t i = idx / r, j = idx % r;
    const double ie = inv_sqrt_e[i], je = inv_sqrt_e[j];
    const double dr_i = d_rho[i], dr_j = d_rho[j];
    const double lij = 0.5 * (static_cast<double>(t.l[i * r + j]) + t.l[j * r + i]);
    const double kij = 0.5 * (static_cast<double>(t.k[i * r + j]) + t.k[j * r + i]);
    z[idx] = eta_n * eta_n * ie * kij * je + eta_n * eta1 * ie * lij * je * dr_j +
             eta_n * eta1 * dr_i * ie * lij * je + (i == j ? eta1 * eta1 * dr_i * dr_i : 0.0);
  });
  b.Sync();
  const double trace = b.Sum(r, [&](int64_t i) { return z[i * r + i]; });
  const double z_scale = trace > 1.0 ? trace : 1.0;
  b.For(r2, [&](int64_t i) { z[i] /= z_scale; });
  b.Sync();
  SymmetricEigen(b, z, hot.m2, hot.rot, r);
  SortEigen(b, z, hot.m2, w.c, w.u, w.flags + 1, r);

  // The eigenvalues of the unscaled Z, floored; an ill-conditioned or floored set is due for
  // re-orthogonalisation.
  b.For(r, [&](int64_t i) { w.c[i] *= z_scale; });
  b.Sync();
  const double c_floor = (rho * eta1) * (rho * eta1);
  const double floored = b.Sum(r, [&](int64_t i) { return w.c[i] < c_floor ? 1.0 : 0.0; });
  const bool reorthogonalize = w.c[0] > kConditionThreshold * w.c[r - 1] || floored > 0.0;
  b.Sync();  // every thread has read c before it is overwritten
  b.For(r, [&](int64_t i) { w.c[i] = w.c[i] < c_floor ? c_floor : w.c[i]; });
  b.Sync();

  // tr(R R^T) = tr(P P^T) + sum_i L_ii (2 - e_i); gamma = sqrt(tr(R R^T) / tr(P P^T)).
  const double tr_pp = b.Sum(t.rows, [&](int64_t i) { return static_cast<double>(t.row_b[i]); });
  const double tr_rr = tr_pp + b.Sum(r, [&](int64_t i) {
    return static_cast<double>(t.l[i * r + i]) * (2.0 - w.e[i]);
  });
  const double sum_sqrt_c = b.Sum(r, [&](int64_t i) { return sqrt(w.c[i]); });
  const double rho_raw = (eta_n * tr_rr + eta1 * (dim * rho + sum_d) - sum_sqrt_c) / (dim - r);
  const double fl = fmax(t.epsilon, t.delta * sqrt(w.c[0]));
  const double rho1 = fmax(rho_raw, fl);
  // d_{t+1} = max(sqrt(c) - rho (before its floor), floor); kept in e1 until the end.
  b.For(r, [&](int64_t i) { w.e1[i] = fmax(sqrt(w.c[i]) - rho_raw, fl); });
  b.Sync();
  const double sum_d1 = b.Sum(r, [&](int64_t i) { return w.e1[i]; });
  const double beta1 = rho1 * (1.0 + t.alpha) + t.alpha * sum_d1 / dim;

  // W_{t+1} = A B, B = J + ((1-eta)/(eta/N)) (D_t + rho_t I) W_t (the caller forms B with coef),
  // A = (eta/N) E_{t+1}^{1/2} C^{-1/2} U^T E_t^{-1/2}.
  // Row factors (eta/N) e1_i^1/2 / c_i^1/2 and column factors e_j^1/2 once (rot is free again),
  // in the order the element expression evaluates them.
  double* row_factor = w.rot;
  double* sqrt_e = w.rot + r;
  b.For(r, [&](int64_t i) {
    t.coef[i] = static_cast<float>(eta1 / eta_n * (d[i] + rho));
    const double e1_i = 1.0 / (beta1 / w.e1[i] + 1.0);
    row_factor[i] = eta_n * sqrt(e1_i) / sqrt(w.c[i]);
    sqrt_e[i] = sqrt(w.e[i]);
  });
  b.Sync();
  b.For(r2, [&](int64_t idx) {
    const int64_t i = idx / r, j = idx % r;
    t.matrix[idx] = static_cast<float>(row_factor[i] * w.u[j * r + i] / sqrt_e[j]);
  });
  b.Sync();  // the old d is read; now replace the state
  b.For(r, [&](int64_t i) {
    const double d1 = w.e1[i];
    t.state[i] = d1;
    w.e1[i] = 1.0 / (beta1 / d1 + 1.0);
  });
  if (b.Leader()) {
    t.state[r] = rho1;
    w.flags[0] = reorthogonalize ? 1.0 : 0.0;
    *t.gamma = tr_pp == 0.0 ? 1.0f : static_cast<float>(sqrt(tr_rr / tr_pp));
  }
  b.Sync();
}

template <typename Block>
MAVG_HOST_DEVICE void Reorthogonalize(Block& b, const NgsgdSmallTask& t) {
  const int r = t.rank;
  const int64_t r2 = static_cast<int64_t>(r) * r;
  Work w(t.work, r);
  const HotWork hot = HotWorkOf(b, w, r);
  // O = E^{-1/2} W W^T E^{-1/2} should be the identity; if not, M = E^{1/2} C^{-1} E^{-1/2}
  // with O = C C^T (Cholesky). M = I when no reorthogonalisation is due or needed.
  double* om = hot.m1;
  b.For(r2, [&](int64_t idx) {
    const int64_t i = idx / r, j = idx % r;
    const double oij = 0.5 * (static_cast<double>(t.l[i * r + j]) + t.l[j * r + i]);
    om[idx] = oij / sqrt(w.e1[i] * w.e1[j]);
  });
  b.Sync();
  const double worst =
      b.Max(r2, [&](int64_t idx) { return fabs(om[idx] - (idx / r == idx % r ? 1.0 : 0.0)); });
  bool apply = w.flags[0] != 0.0 && worst > kOrthogonalityThreshold;
  if (apply) {
    // In-place Cholesky (lower triangle of om), column by column.
    for (int k = 0; k < r && apply; ++k) {
      const double pivot = om[k * r + k];
      apply = pivot > 0.0 && isfinite(pivot);
      if (!apply) break;
      b.Sync();  // every thread has read the pivot
      if (b.Leader()) om[k * r + k] = sqrt(pivot);
      b.Sync();
      b.For(r - k - 1, [&](int64_t ii) {
        const int64_t i = k + 1 + ii;
        om[i * r + k] /= om[k * r + k];
      });
      b.Sync();
      const int64_t m = r - k - 1;
      b.For(m * m, [&](int64_t idx) {
        const int64_t i = k + 1 + idx / m, j = k + 1 + idx % m;
        if (j <= i) om[i * r + j] -= om[i * r + k] * om[j * r + k];
      });
      b.Sync();
    }
  }
  // (A failed Cholesky, which should not happen, leaves the basis as it is: M = I.)
  double* cinv = hot.m2;
  if (apply) {
    b.For(r, [&](int64_t j) {  // column j of C^{-1}: forward substitution
      for (int64_t i = 0; i < r; ++i) {
        double s = i == j ? 1.0 : 0.0;
        for (int64_t k = j; k < i; ++k) s -= om[i * r + k] * cinv[k * r + j];
        cinv[i * r + j] = i < j ? 0.0 : s / om[i * r + i];
      }
    });
    b.Sync();
  }
  b.For(r2, [&](int64_t idx) {
    const int64_t i = idx / r, j = idx % r;
    if (!apply) {
      t.matrix[idx] = i == j ? 1.0f : 0.0f;
    } else {
      t.matrix[idx] = j <= i ? static_cast<float>(sqrt(w.e1[i]) * cinv[idx] / sqrt(w.e1[j])) : 0.0f;
    }
  });
  b.Sync();
}

template <typename Block>
MAVG_HOST_DEVICE void Step(Block& b, const NgsgdSmallTask& t) {
  const double s = static_cast<double>(*t.gamma_in) * static_cast<double>(*t.gamma_out);
  double ms = 1.0;
  bool limited = false;
  if (t.max_change > 0.0) {
    const double sum = b.Sum(t.rows, [&](int64_t i) {
      return sqrt(static_cast<double>(t.row_a[i]) * static_cast<double>(t.row_b[i]));
    });
    const double tot = (t.max_change_lr > 0.0 ? t.max_change_lr : t.lr) * s * sum;
    if (tot > t.max_change) ms = t.max_change / tot, limited = true;
  }
  if (b.Leader()) {
    *t.neg_step = static_cast<float>(-(t.lr * s * ms));
    if (limited) *t.limited += 1.0;
    if (t.scales != nullptr) t.scales[ScaleBin(ms, limited)] += 1.0;
  }
  b.Sync();
}

}  // namespace ngsgd_small

template <typename Block>
MAVG_HOST_DEVICE void RunNgsgdSmallTask(Block& b, const NgsgdSmallTask& t) {
  switch (t.kind) {
    case NgsgdSmallKind::kGamma:
      return ngsgd_small::Gamma(b, t);
    case NgsgdSmallKind::kSubspace:
      return ngsgd_small::Subspace(b, t);
    case NgsgdSmallKind::kReorthogonalize:
      return ngsgd_small::Reorthogonalize(b, t);
    case NgsgdSmallKind::kStep:
      return ngsgd_small::Step(b, t);
  }
}

// Tasks that share no memory they write (Backend::RunNgsgdSmallBatch), as one grid: block i
// runs tasks[i]. The batch is the kernel's parameter, within the 4 KB every CUDA device takes;
// more tasks are several launches.
struct NgsgdSmallBatch {
  static constexpr int kMaxTasks = 16;
  int count = 0;
  NgsgdSmallTask tasks[kMaxTasks];
};
static_assert(sizeof(NgsgdSmallBatch) + sizeof(int64_t) <= 4096,
              "a batch and the fast memory size must fit in a kernel's parameters");

// The first `count` (at most kMaxTasks) of `tasks`.
inline NgsgdSmallBatch MakeNgsgdSmallBatch(const NgsgdSmallTask* tasks, int count) {
  NgsgdSmallBatch batch;
  batch.count = count < NgsgdSmallBatch::kMaxTasks ? count : NgsgdSmallBatch::kMaxTasks;
  for (int i = 0; i < batch.count; ++i) batch.tasks[i] = tasks[i];
  return batch;
}

// The fast memory a task uses when its block has enough (NgsgdSmallFastDoubles), else 0.
inline int64_t NgsgdSmallTaskFastDoubles(const NgsgdSmallTask& t) {
  const bool hot =
      t.kind == NgsgdSmallKind::kSubspace || t.kind == NgsgdSmallKind::kReorthogonalize;
  return hot ? NgsgdSmallFastDoubles(t.rank) : 0;
}

// The fast memory a batch's blocks get: the most any of its tasks uses, of those within
// `available`; a task needing more runs from its work buffer (the same bits).
inline int64_t NgsgdSmallBatchFastDoubles(const NgsgdSmallBatch& batch, int64_t available) {
  int64_t most = 0;
  for (int i = 0; i < batch.count; ++i) {
    const int64_t want = NgsgdSmallTaskFastDoubles(batch.tasks[i]);
    if (want <= available && want > most) most = want;
  }
  return most;
}

// Block `index` of a batch's grid.
template <typename Block>
MAVG_HOST_DEVICE void RunNgsgdSmallBatchTask(Block& b, const NgsgdSmallBatch& batch, int index) {
  RunNgsgdSmallTask(b, batch.tasks[index]);
}

}  // namespace mavg
