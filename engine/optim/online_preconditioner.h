#pragma once
// Online natural-gradient preconditioning (Povey et al., Kaldi nnet2 OnlinePreconditioner /
// nnet3 OnlineNaturalGradient; docs/algorithms.md §2). It keeps a low-rank-plus-diagonal model of
// the Fisher matrix of a stream of vectors,
//   F_t = X_t^T diag(d_t) X_t + rho_t I,   X_t: R x D with orthonormal rows,
// updated from every minibatch R_t (N x D) as a forgetting average with
// eta = 1 - exp(-N / num_samples_history) (capped at eta_max, 0.9), and preconditions the minibatch
// with (a scaled) inverse: P = beta_t R_t G_t^{-1}, G_t = F_t + (alpha / D) tr(F_t) I, computed
// without D x D matrices as P = R_t - (R_t W_t^T) W_t with W_t = E_t^{1/2} X_t stored.
// The small R x R steps (the symmetric eigenproblem in double precision, the new d and rho, the
// scale gamma) run on the Backend too (backend/ngsgd_small.h), as does everything of size N x D
// or R x D: preconditioning a minibatch queues device work only, with no host round trip. Only
// the update schedule (t, skipped) is kept on the host: it does not depend on the data.

#include <cstdint>
#include <vector>

#include "engine/backend/device_buffer.h"

namespace mavg {

struct PreconditionerOptions {
  int rank = 20;                      // R (at most (D + 1) / 2, or D - 1 with nnet2_rank_cap)
  int update_period = 4;              // update the Fisher model every this many minibatches
  double num_samples_history = 2000;  // S in eta = 1 - exp(-N / S)
  double alpha = 4.0;                 // smoothing towards the identity
  double epsilon = 1e-10;             // absolute floor of rho and d
  double delta = 5e-4;                // relative floor (of the largest eigenvalue)
  double eta_max = 0.9;               // cap of eta (nnet2/3); 1: none (the authors' fork)
  bool nnet2_rank_cap = false;        // cap R at D - 1 (nnet2, the fork), not (D + 1) / 2
};

class OnlinePreconditioner {
 public:
  OnlinePreconditioner(Backend& backend, const PreconditionerOptions& options);

  // Replaces x [N x D] by its preconditioned version P (in place), writes the squared norms of
  // P's rows to row_products [1 x N] (before scaling), and the scale gamma to apply to P so that
  // ||gamma P||_F = ||x||_F to *gamma (one float in the backend's memory). Initialises itself
  // on the first call (and after Reset).
  void Precondition(MatrixView x, MatrixView row_products, float* gamma);

  // Precondition in phases, so that a caller can run the small steps of several
  // preconditioners together (Backend::RunNgsgdSmallBatch): Begin, then Continue until it
  // returns false, running the small step it gives (on this preconditioner's backend) before the
  // next call. Continue queues the device work up to the next small step. Precondition is
  // this loop with every step run at once; the operations are the same, in the same order.
  void Begin(MatrixView x, MatrixView row_products, float* gamma);
  bool Continue(NgsgdSmallTask* task);

  // Back to the uninitialised state (the next minibatch initialises).
  void Reset() { t_ = -1; }

  // Inspection (tests): the current model (Rho, D and the basis are copied from the device).
  int Rank() const { return rank_; }
  bool Initialized() const { return t_ >= 0; }
  int64_t Updates() const { return t_; }
  double Rho();
  std::vector<double> D();
  // X_t = E_t^{-1/2} W_t, the orthonormal basis, as a host R x D row-major array.
  std::vector<double> OrthonormalBasis();
  double Eta(int64_t n) const;

  // Serialised state for checkpoints: W_t and the scalars (doubles stored bit for bit).
  std::vector<MatrixView> State();
  // Sets the state tensors' sizes for dimension D before State() can be read into.
  void PrepareState(int dim);
  // After the tensors of State() were overwritten (a checkpoint): take the scalars from them.
  void StateLoaded() {
    if (rank_ > 0) SyncScalarsFromState();
  }

 private:
  // Where a minibatch's preconditioning stands (Begin/Continue). Every pass over a matrix
  // (the initialisation's, then the minibatch's own) starts with a small step: kGamma, or
  // kSubspace followed by kReorthogonalize.
  enum class Stage {
    kIdle,                  // no minibatch
    kStart,                 // begun: nothing queued yet
    kNextPass,              // the initialisation's next pass, or the minibatch's own
    kAfterSubspace,         // the subspace step ran: form W_{t+1}
    kAfterReorthogonalize,  // the reorthogonalisation ran: apply it
    kDone,                  // the minibatch's pass is complete
  };
  struct Job {
    MatrixView x, row_products;  // the minibatch and its row products (the caller's)
    float* gamma = nullptr;      // the caller's
    int init_passes = 0;         // the initialisation's passes still to run
    bool initializing = false;   // the initialisation's passes come first
    bool own_pass = false;       // the current pass is the minibatch's own
    bool update = false;         // the current pass updates the Fisher model
  };
  Stage PassEnd() const { return job_.own_pass ? Stage::kDone : Stage::kNextPass; }

  void InitDefault(int dim);
  // Queues the current pass over x up to its first small step and writes it to *task.
  void StartPass(MatrixView x, MatrixView row_products, float* gamma, bool update,
                 NgsgdSmallTask* task);
  // After the subspace step: W_{t+1}; returns whether the reorthogonalisation step is due
  // (then in *task), else the pass is complete.
  bool FormNextBasis(NgsgdSmallTask* task);
  void ApplyReorthogonalization();
  NgsgdSmallTask Task(NgsgdSmallKind kind, int64_t n);
  // scalars_ as doubles: d [R], rho, t, skipped.
  double* StateDoubles() { return reinterpret_cast<double*>(scalars_.View().data); }
  void SyncScalarsToState();
  void SyncScalarsFromState();

  Backend* backend_;  // [not null], not owned
  PreconditionerOptions options_;
  int rank_ = 0;     // R actually used
  int dim_ = 0;      // D
  int64_t t_ = -1;   // updates done; -1: uninitialised
  int skipped_ = 0;  // minibatches since the last update
  Matrix w_;         // [R x D] W_t = E_t^{1/2} X_t
  Matrix scalars_;   // [1 x 2*(R+3)]: d, rho (kept here, on the device), t, skipped as doubles
  // Workspace: H, J (then B), W_{t+1}, two R x R matrices, coef, |x_i|^2, the small steps'.
  Matrix h_, j_, w1_, small_, small2_, coef_, row_squares_;
  DeviceBuffer<double> work_;
  DeviceBuffer<float> init_gamma_;  // gamma of the initialisation passes (unused)
  Matrix init_x_, init_prod_;  // the initialisation's copy of the first minibatch, row products
  Stage stage_ = Stage::kIdle;
  Job job_;
  int64_t pass_rows_ = 0;  // N of the current pass
};

}  // namespace mavg
