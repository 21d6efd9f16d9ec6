#pragma once
// When workers average (docs/algorithms.md §1a, Su & Chen's nnet-train-frmshuff-mpi): a worker
// averages after the minibatch whose end makes its cumulative frame count cross a multiple of
// F (frames per reduce; F = K x minibatch for "every K minibatches"):
//   average after minibatch m (1-based)  <=>  floor((m-1) mb / F) != floor(m mb / F).
// Every worker performs the same number R of averagings per epoch, as many as the smallest
// shard allows, and stops right after the last one; its remaining frames are dropped (counted).

#include <cstdint>

namespace mavg {

struct AveragingPlan {
  int64_t minibatch = 0;          // frames per minibatch
  int64_t frames_per_reduce = 0;  // F
  int64_t reduces = 0;            // R averagings per epoch
  int64_t minibatches = 0;        // minibatches per worker per epoch (ends at the R-th averaging)

  bool AverageAfter(int64_t m) const {
    return (m - 1) * minibatch / frames_per_reduce != m * minibatch / frames_per_reduce;
  }
};

// min_shard_frames: frames of the smallest shard. Throws when not even one averaging fits.
AveragingPlan PlanAveraging(int64_t min_shard_frames, int64_t minibatch, int64_t frames_per_reduce);

}  // namespace mavg
